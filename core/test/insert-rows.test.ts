import { expect } from 'chai';
import type { Knex } from 'knex';
import { createKnex } from '../src/db/knex';
import { dialectOfKnex } from '../src/db/dialect';
import { insertRows, insertRowsReturningIds, insertValues } from '../src/db/insert-rows';
import { describeEachBackend, productionBackend } from '../src/testing/services';

const rowsOf = (count: number, scope: number, prefix = 'code') =>
  Array.from({ length: count }, (_, i) => ({
    scope,
    code: `${prefix}-${i}`,
    note: `note ${i}`,
    at: new Date(Date.UTC(2026, 0, 1, 0, 0, i % 60, i % 1000)),
  }));

describeEachBackend('insertRows and insertRowsReturningIds', (backend) => {
  let knex: Knex;
  before(async () => {
    knex = createKnex(backend().databaseUrl);
    await knex.schema.createTable('ir_items', (t) => {
      t.increments('id').primary();
      t.integer('scope').notNullable();
      t.string('code', 64).notNullable();
      t.text('note').nullable();
      t.datetime('at', { precision: 3 }).nullable();
      t.unique(['scope', 'code']);
    });
  });
  after(async () => {
    await knex.schema.dropTableIfExists('ir_items');
    await knex.destroy();
  });

  const stored = async (scope: number) =>
    (await knex('ir_items').where({ scope }).orderBy('id').select('id', 'code', 'note', 'at')).map(
      (r: { id: number; code: string; note: string | null; at: unknown }) => ({
        ...r,
        id: Number(r.id),
        at: r.at === null ? null : new Date(r.at as string | number | Date).toISOString(),
      }),
    );

  it('returns the id of every row in row order, over several statements', async () => {
    const rows = rowsOf(2500, 1);
    const ids = await knex.transaction((trx) =>
      insertRowsReturningIds(trx, 'ir_items', rows, { uniqueColumn: 'code', scope: { scope: 1 } }),
    );
    const inDb = await stored(1);
    expect(ids).to.have.length(2500);
    expect(ids).to.deep.equal(inDb.map((r) => r.id));
    expect(inDb.map((r) => r.code)).to.deep.equal(rows.map((r) => r.code));
  });

  it('writes quotes, placeholders, percent signs, backslashes, unicode, nulls and UTC times as given', async () => {
    const awkward = ["it's", 'a ? b ?? c', '100% %s', 'back\\slash', 'zero\u0000byte', 'naïve 🚀', null];
    const rows = awkward.map((note, i) => ({
      scope: 2,
      code: `a${i}`,
      note,
      at: i === 0 ? null : new Date(Date.UTC(2026, 2, 29, 1, 30, 15, 250)),
    }));
    await insertRows(knex, 'ir_items', rows);
    const inDb = await stored(2);
    expect(inDb.map((r) => r.note)).to.deep.equal(awkward);
    expect(inDb[0].at).to.equal(null);
    expect(inDb[1].at).to.equal('2026-03-29T01:30:15.250Z');
  });

  it('writes values shared by every row (a number, a text, a time, a null) into each row', async () => {
    const at = new Date(Date.UTC(2026, 9, 25, 0, 59, 59, 999));
    await insertRows(
      knex,
      'ir_items',
      [1, 2, 3].map((i) => ({ scope: 7, code: `s${i}`, note: null, at })),
    );
    await insertRows(
      knex,
      'ir_items',
      [4, 5].map((i) => ({ scope: 7, code: `s${i}`, note: 'same', at: null })),
    );
    expect((await stored(7)).map(({ code, note, at: time }) => ({ code, note, at: time }))).to.deep.equal(
      [1, 2, 3, 4, 5].map((i) => ({
        code: `s${i}`,
        note: i <= 3 ? null : 'same',
        at: i <= 3 ? '2026-10-25T00:59:59.999Z' : null,
      })),
    );
  });

  it('keeps shared values apart between calls on one connection', async () => {
    await knex.transaction(async (trx) => {
      for (const [n, note] of [
        [1, 'first'],
        [2, 'second'],
        [3, 'first'],
      ] as const) {
        await insertRows(
          trx,
          'ir_items',
          [0, 1].map((i) => ({ scope: 8, code: `c${n}-${i}`, note })),
        );
      }
    });
    expect((await stored(8)).map((r) => `${r.code}:${r.note}`)).to.deep.equal([
      'c1-0:first',
      'c1-1:first',
      'c2-0:second',
      'c2-1:second',
      'c3-0:first',
      'c3-1:first',
    ]);
  });

  it('skips rows whose key exists when asked, and fails on them otherwise', async () => {
    await insertRows(knex, 'ir_items', rowsOf(3, 3));
    await insertRows(knex, 'ir_items', [...rowsOf(5, 3)].reverse(), { ignoreExisting: true });
    expect((await stored(3)).map((r) => r.code)).to.deep.equal(['code-0', 'code-1', 'code-2', 'code-4', 'code-3']);
    let failure: Error | null = null;
    await insertRows(knex, 'ir_items', rowsOf(1, 3)).catch((err: Error) => (failure = err));
    expect(failure).to.be.instanceOf(Error);
  });

  it('takes rows as flat values with shared columns, in as many statements as needed', async () => {
    const at = new Date(Date.UTC(2026, 5, 1, 12, 0, 0, 5));
    const values = Array.from({ length: 1203 }, (_, i) => [`flat-${i}`, i % 3 ? `note ${i}` : null]).flat();
    const written = await insertValues(knex, 'ir_items', {
      columns: ['code', 'note'],
      values,
      shared: { scope: 9, at },
    });
    expect(written.reduce((n, s) => n + s.rows, 0)).to.equal(1203);
    const inDb = await stored(9);
    expect(inDb.map((r) => [r.code, r.note])).to.deep.equal(
      Array.from({ length: 1203 }, (_, i) => [`flat-${i}`, i % 3 ? `note ${i}` : null]),
    );
    expect(new Set(inDb.map((r) => r.at))).to.deep.equal(new Set(['2026-06-01T12:00:00.005Z']));
    expect(await insertValues(knex, 'ir_items', { columns: ['code'], values: [], shared: { scope: 9 } })).to.deep.equal(
      [],
    );
  });

  it('writes rows whose every column has the same value, skipping the twin when asked', async () => {
    const twin = { scope: 10, code: 'twin', note: 'same', at: null };
    await insertRows(knex, 'ir_items', [twin, twin], { ignoreExisting: true });
    expect((await stored(10)).map((r) => r.code)).to.deep.equal(['twin']);
  });

  it("writes inside the caller's transaction: a failed transaction leaves no rows", async () => {
    const failure = await knex
      .transaction(async (trx) => {
        await insertRows(trx, 'ir_items', rowsOf(10, 6));
        expect(await trx('ir_items').where({ scope: 6 }).count({ n: '*' })).to.deep.equal([{ n: 10 }]);
        throw new Error('abort');
      })
      .catch((err: Error) => err);
    expect(failure).to.have.property('message', 'abort');
    expect(await stored(6)).to.deep.equal([]);
  });

  it('looks the ids up when the database did not number the rows consecutively', async () => {
    // MySQL numbers in steps of 2 under auto_increment_increment = 2 (as in multi-primary setups); on
    // SQLite a trigger interleaves a row of its own after each insert.
    const rows = rowsOf(50, 4);
    const ids = await knex.transaction(async (trx) => {
      if (dialectOfKnex(trx) === 'mysql') {
        await trx.raw('SET SESSION auto_increment_increment = 2');
      } else {
        await trx.raw(
          "CREATE TRIGGER ir_interleave AFTER INSERT ON ir_items WHEN NEW.scope = 4 BEGIN INSERT INTO ir_items (scope, code) VALUES (5, 'x' || NEW.id); END",
        );
      }
      try {
        return await insertRowsReturningIds(trx, 'ir_items', rows, { uniqueColumn: 'code', scope: { scope: 4 } });
      } finally {
        await trx.raw(
          dialectOfKnex(trx) === 'mysql' ? 'SET SESSION auto_increment_increment = 1' : 'DROP TRIGGER ir_interleave',
        );
      }
    });
    const inDb = await stored(4);
    expect(ids).to.deep.equal(inDb.map((r) => r.id));
    expect(ids[1] - ids[0]).to.equal(2);
  });
});

describe('prepared statements per MySQL connection', () => {
  it('stay at most 100: the least recently used are closed on the server', async function () {
    const backend = await productionBackend();
    if (!backend) this.skip();
    const knex = createKnex(backend!.databaseUrl);
    type Connection = {
      execute(sql: string, values: unknown[], done: (err: Error | null) => void): void;
      query(
        sql: string,
        done: (err: Error | null, rows: Array<{ Variable_name: string; Value: string }>) => void,
      ): void;
    };
    const client = knex.client as {
      acquireConnection(): Promise<Connection>;
      releaseConnection(c: Connection): Promise<unknown>;
    };
    // Statements this session prepared and has not closed (the global count moves with other connections).
    const held = (connection: Connection) =>
      new Promise<number>((resolve, reject) =>
        connection.query(
          "SHOW SESSION STATUS WHERE Variable_name IN ('Com_stmt_prepare', 'Com_stmt_close')",
          (err, rows) => {
            if (err) return reject(err);
            const value = (name: string) => Number(rows.find((r) => r.Variable_name === name)!.Value);
            resolve(value('Com_stmt_prepare') - value('Com_stmt_close'));
          },
        ),
      );
    try {
      const connection = await client.acquireConnection();
      const before = await held(connection);
      for (let n = 0; n < 130; n++)
        await new Promise<void>((resolve, reject) =>
          connection.execute(`SELECT ? + ${n} AS v`, [1], (err) => (err ? reject(err) : resolve())),
        );
      const kept = (await held(connection)) - before;
      await client.releaseConnection(connection);
      expect(kept).to.be.at.most(100).and.at.least(90);
    } finally {
      await knex.destroy();
      await backend!.dispose();
    }
  });
});
