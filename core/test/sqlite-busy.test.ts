import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { createKnex } from '../src/db/knex';
import { transactionWithRetry } from '../src/db/retry-transaction';

/** better-sqlite3 as this test uses it (the package ships no types): another connection to the file. */
const Database = require('better-sqlite3') as new (file: string) => {
  prepare(sql: string): { run(): unknown };
  close(): void;
};

/**
 * Another process (a command beside `serve`) writes the SQLite file between a transaction's read and its
 * write: SQLite answers SQLITE_BUSY at once, and the transaction is run again (a review's finding, session
 * 27: a send's record failed so, and its claim of 50 was mailed again two minutes later).
 */
describe("SQLite: a transaction that read, then meets another process's write", () => {
  it('is run again, and its write lands', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sqlite-busy-'));
    const file = path.join(dir, 'db.sqlite');
    const knex = createKnex(`sqlite:${file}`);
    const other = new Database(file);
    try {
      await knex.schema.createTable('counters', (t) => {
        t.integer('id').primary();
        t.integer('n').notNullable();
      });
      await knex('counters').insert({ id: 1, n: 0 });
      let attempts = 0;
      await transactionWithRetry(knex, async (trx) => {
        attempts++;
        const { n } = await trx('counters').where({ id: 1 }).first('n');
        // The other process writes after this transaction's read, the first time only.
        if (attempts === 1) other.prepare('update counters set n = n + 10 where id = 1').run();
        await trx('counters')
          .where({ id: 1 })
          .update({ n: Number(n) + 1 });
      });
      expect(attempts).to.equal(2);
      expect((await knex('counters').where({ id: 1 }).first('n')).n).to.equal(11);
    } finally {
      other.close();
      await knex.destroy();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
