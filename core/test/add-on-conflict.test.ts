import { expect } from 'chai';
import type { Knex } from 'knex';
import { createKnex } from '../src/db/knex';
import { addOnConflict } from '../src/db/add-on-conflict';
import { describeEachBackend } from '../src/testing/services';

const AT = new Date(Date.UTC(2026, 10, 27, 3, 30, 15, 250));
const KEY = ['owner', 'name', 'period'] as const;

describeEachBackend('addOnConflict: counter rows added to the stored ones', (backend) => {
  let knex: Knex;
  before(async () => {
    knex = createKnex(backend().databaseUrl);
    await knex.schema.createTable('aoc_counts', (t) => {
      t.integer('owner').notNullable();
      t.string('name', 32).notNullable();
      t.datetime('period', { precision: 3 }).notNullable();
      t.integer('n').notNullable();
      t.primary(['owner', 'name', 'period']);
    });
  });
  after(async () => {
    await knex.schema.dropTableIfExists('aoc_counts');
    await knex.destroy();
  });

  const stored = async (owner: number) =>
    (await knex('aoc_counts').where({ owner }).orderBy(['name', 'period']).select('name', 'period', 'n')).map(
      (r: { name: string; period: unknown; n: unknown }) => ({
        name: r.name,
        period: new Date(r.period as string | number | Date).toISOString(),
        n: Number(r.n),
      }),
    );

  it('inserts new keys and adds to existing ones, over several statements, within a transaction', async () => {
    // 4 values a row: 7,500 rows a statement at most, so 30,000 rows make four statements.
    const rows = (n: number) =>
      Array.from({ length: 30_000 }, (_, i) => ({ owner: 1, name: `c${String(i).padStart(5, '0')}`, period: AT, n }));
    await knex.transaction((trx) => addOnConflict(trx, 'aoc_counts', KEY, 'n', rows(2)));
    await knex.transaction((trx) => addOnConflict(trx, 'aoc_counts', KEY, 'n', rows(3).reverse()));
    const all = await stored(1);
    expect(all).to.have.length(30_000);
    expect(all.every((r) => r.n === 5 && r.period === AT.toISOString())).to.equal(true);
  });

  it('keeps keys apart by every key column (a later period is a row of its own), and nothing for no rows', async () => {
    const later = new Date(AT.getTime() + 3_600_000);
    await addOnConflict(knex, 'aoc_counts', KEY, 'n', [
      { owner: 2, name: 'a', period: later, n: 1 },
      { owner: 2, name: 'a', period: AT, n: 2 },
    ]);
    await addOnConflict(knex, 'aoc_counts', KEY, 'n', [{ owner: 2, name: 'a', period: later, n: 10 }]);
    await addOnConflict(knex, 'aoc_counts', KEY, 'n', []);
    expect(await stored(2)).to.deep.equal([
      { name: 'a', period: AT.toISOString(), n: 2 },
      { name: 'a', period: later.toISOString(), n: 11 },
    ]);
  });

  it('refuses rows whose columns differ from the first row’s', async () => {
    const rows: Array<Record<string, unknown>> = [
      { owner: 3, name: 'a', period: AT, n: 1 },
      { owner: 3, name: 'b', period: AT },
    ];
    const err = await addOnConflict(knex, 'aoc_counts', ['owner', 'name', 'period'], 'n', rows).catch((e: Error) => e);
    expect(err).to.be.instanceOf(Error);
    expect((err as Error).message).to.match(/every row needs the columns of the first/);
    expect(await stored(3)).to.deep.equal([]);
  });
});
