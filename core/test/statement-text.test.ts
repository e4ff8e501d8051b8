import { expect } from 'chai';
import type { Knex } from 'knex';
import { createKnex } from '../src/db/knex';
import { placeholders, rowPlaceholders, selectText, writeText } from '../src/db/statement-text';
import { describeEachBackend } from '../src/testing/services';

const AT = new Date(Date.UTC(2026, 10, 27, 3, 30, 15, 250));

describeEachBackend('statement text past knex (selectText, writeText)', (backend) => {
  let knex: Knex;
  before(async () => {
    knex = createKnex(backend().databaseUrl);
    await knex.schema.createTable('st_items', (t) => {
      t.increments('id').primary();
      t.integer('owner').notNullable();
      t.string('name', 32).notNullable();
      t.datetime('at', { precision: 3 }).nullable();
      t.boolean('on').notNullable().defaultTo(true);
      t.text('options').nullable();
      t.integer('n').notNullable().defaultTo(0);
    });
  });
  after(async () => {
    await knex.schema.dropTableIfExists('st_items');
    await knex.destroy();
  });

  it('reads a row exactly as knex’s builder reads it (dates, booleans, nulls, text)', async () => {
    await knex('st_items').insert([
      { owner: 1, name: 'a', at: AT, on: true, options: '{"topicArns":[]}' },
      { owner: 1, name: 'b', at: null, on: false, options: null },
    ]);
    const columns = ['id', 'owner', 'name', 'at', 'on', 'options', 'n'];
    const built = await knex('st_items').where({ owner: 1 }).orderBy('id').select(columns);
    const text = await selectText(
      knex,
      `select ${columns.map((c) => `\`${c}\``).join(', ')} from \`st_items\` where \`owner\` = ? order by \`id\``,
      [1],
    );
    expect(text).to.have.length(2);
    expect(text).to.deep.equal(built);
    expect(await selectText(knex, 'select `id` from `st_items` where `owner` = ?', [99])).to.deep.equal([]);
  });

  it('writes dates and booleans as knex does, and answers the rows a write matched, changed or not', async () => {
    await writeText(
      knex,
      `insert into \`st_items\` (\`owner\`, \`name\`, \`at\`, \`on\`) values ${rowPlaceholders(2, 4)}`,
      [2, "it's ? %s", AT, false, 2, 'c', AT, true],
    );
    const stored = await knex('st_items').where({ owner: 2 }).orderBy('id').select('name', 'at', 'on');
    expect(stored.map((r: { name: string }) => r.name)).to.deep.equal(["it's ? %s", 'c']);
    expect(stored.map((r: { at: unknown }) => new Date(r.at as string | number | Date).toISOString())).to.deep.equal([
      AT.toISOString(),
      AT.toISOString(),
    ]);
    expect(stored.map((r: { on: unknown }) => Boolean(r.on))).to.deep.equal([false, true]);
    const sql = `update \`st_items\` set \`n\` = \`n\` + ? where \`owner\` in (${placeholders(2)})`;
    expect(await knex.transaction((trx) => writeText(trx, sql, [10, 2, 9]))).to.equal(2);
    // Matched, not changed: the lease claims count on it (a row set to the value it has still counts).
    expect(await writeText(knex, sql, [0, 2, 9])).to.equal(2);
    expect(await writeText(knex, sql, [1, 98, 99])).to.equal(0);
  });

  it('runs inside the caller’s transaction: a rollback undoes it', async () => {
    await knex
      .transaction(async (trx) => {
        await writeText(trx, 'insert into `st_items` (`owner`, `name`) values (?, ?)', [4, 'x']);
        expect(await selectText(trx, 'select `name` from `st_items` where `owner` = ?', [4])).to.deep.equal([
          { name: 'x' },
        ]);
        throw new Error('undo');
      })
      .catch((err: Error) => expect(err.message).to.equal('undo'));
    expect(await selectText(knex, 'select `name` from `st_items` where `owner` = ?', [4])).to.deep.equal([]);
  });

  it('writes placeholders for IN lists and VALUES lists', () => {
    expect([placeholders(0), placeholders(1), placeholders(3)]).to.deep.equal(['', '?', '?, ?, ?']);
    expect(rowPlaceholders(2, 2)).to.equal('(?, ?), (?, ?)');
  });
});
