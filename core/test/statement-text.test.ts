import { expect } from 'chai';
import type { Knex } from 'knex';
import { createKnex } from '../src/db/knex';
import { addOnConflict } from '../src/db/add-on-conflict';
import { placeholders, selectText, writeText } from '../src/db/statement-text';
import { describeEachBackend } from '../src/testing/services';

const AT = new Date(Date.UTC(2026, 10, 27, 3, 30, 15, 250));

describeEachBackend('statement text past knex (selectText, writeText, addOnConflict)', (backend) => {
  let knex: Knex;
  before(async () => {
    knex = createKnex(backend().databaseUrl);
    await knex.schema.createTable('st_counts', (t) => {
      t.integer('owner').notNullable();
      t.string('name', 32).notNullable();
      t.datetime('period', { precision: 3 }).notNullable();
      t.integer('n').notNullable();
      t.boolean('on').notNullable().defaultTo(true);
      t.primary(['owner', 'name', 'period']);
    });
  });
  after(async () => {
    await knex.schema.dropTableIfExists('st_counts');
    await knex.destroy();
  });

  const read = async (owner: number) =>
    (
      await selectText<{ name: string; period: unknown; n: unknown }>(
        knex,
        'select `name`, `period`, `n` from `st_counts` where `owner` = ? and `on` = ? order by `name`',
        [owner, true],
      )
    ).map((r) => ({
      name: r.name,
      period: new Date(r.period as string | number | Date).toISOString(),
      n: Number(r.n),
    }));

  it('inserts rows, then adds to the stored ones whose key exists, within a transaction and past 500 rows', async () => {
    const rows = (n: number) =>
      Array.from({ length: 600 }, (_, i) => ({ owner: 1, name: `c${String(i).padStart(3, '0')}`, period: AT, n }));
    await knex.transaction((trx) => addOnConflict(trx, 'st_counts', ['owner', 'name', 'period'], 'n', rows(2)));
    await knex.transaction((trx) => addOnConflict(trx, 'st_counts', ['owner', 'name', 'period'], 'n', rows(3)));
    const stored = await read(1);
    expect(stored).to.have.length(600);
    expect(stored.every((r) => r.n === 5 && r.period === AT.toISOString())).to.equal(true);
  });

  it('answers how many rows a write changed, and the rows a select reads (quotes and placeholders in values)', async () => {
    await addOnConflict(knex, 'st_counts', ['owner', 'name', 'period'], 'n', [
      { owner: 2, name: "it's ? %s", period: AT, n: 1 },
      { owner: 2, name: 'b', period: AT, n: 1 },
      { owner: 3, name: 'c', period: AT, n: 1 },
    ]);
    const changed = await knex.transaction((trx) =>
      writeText(trx, `update \`st_counts\` set \`n\` = \`n\` + ? where \`owner\` in (${placeholders(2)})`, [10, 2, 9]),
    );
    expect(changed).to.equal(2);
    expect(await read(2)).to.deep.equal([
      { name: 'b', period: AT.toISOString(), n: 11 },
      { name: "it's ? %s", period: AT.toISOString(), n: 11 },
    ]);
    expect(await read(3)).to.deep.equal([{ name: 'c', period: AT.toISOString(), n: 1 }]);
    expect(placeholders(0)).to.equal('');
  });

  it('runs inside the caller’s transaction: a rollback undoes it', async () => {
    await knex
      .transaction(async (trx) => {
        await addOnConflict(trx, 'st_counts', ['owner', 'name', 'period'], 'n', [
          { owner: 4, name: 'x', period: AT, n: 1 },
        ]);
        expect(await selectText(trx, 'select `n` from `st_counts` where `owner` = ?', [4])).to.have.length(1);
        throw new Error('undo');
      })
      .catch((err: Error) => expect(err.message).to.equal('undo'));
    expect(await selectText(knex, 'select `n` from `st_counts` where `owner` = ?', [4])).to.have.length(0);
  });
});
