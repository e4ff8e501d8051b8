import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { createKnex } from '../src/db/knex';
import { transactionWithRetry } from '../src/db/retry-transaction';
import { isDatabaseUnavailable } from '../src/db/errors';

/** better-sqlite3 as this test uses it (the package ships no types): another connection to the file. */
const Database = require('better-sqlite3') as new (file: string) => {
  prepare(sql: string): { run(): unknown };
  exec(sql: string): void;
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

/**
 * Another process holds the write lock (an import or a compaction beside `serve`): a statement waits for it
 * without stopping the process. SQLite's busy timeout (5 s) used to block the event loop that long, a
 * transaction's retries 25 s.
 */
describe("SQLite: a statement meeting another process's write lock", () => {
  let dir: string;
  let file: string;
  let knex: ReturnType<typeof createKnex>;
  let other: InstanceType<typeof Database>;
  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sqlite-locked-'));
    file = path.join(dir, 'db.sqlite');
    knex = createKnex(`sqlite:${file}`, { sqliteBusyWaitMs: 2_000 });
    await knex.schema.createTable('counters', (t) => {
      t.integer('id').primary();
      t.integer('n').notNullable();
    });
    await knex('counters').insert({ id: 1, n: 0 });
    other = new Database(file);
  });
  afterEach(async () => {
    other.close();
    await knex.destroy();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** The longest the event loop went without a turn while `work` ran (ticks every 5 ms). */
  async function longestStall<T>(work: Promise<T>): Promise<{ result: T; stallMs: number }> {
    let last = performance.now();
    let stallMs = 0;
    const ticker = setInterval(() => {
      stallMs = Math.max(stallMs, performance.now() - last);
      last = performance.now();
    }, 5);
    try {
      return { result: await work, stallMs };
    } finally {
      clearInterval(ticker);
    }
  }

  it('waits for it, the event loop free meanwhile, then writes (alone and inside a transaction)', async () => {
    other.exec('begin immediate');
    const released = new Promise<void>((resolve) =>
      setTimeout(() => {
        other.exec('commit');
        resolve();
      }, 400),
    );
    const alone = await longestStall(knex('counters').where({ id: 1 }).increment('n', 1));
    await released;
    expect(alone.result).to.equal(1);
    expect(alone.stallMs, 'the event loop kept its turns').to.be.below(150);

    const inTransaction = await longestStall(
      knex.transaction(async (trx) => {
        const { n } = await trx('counters').where({ id: 1 }).first('n');
        other.exec('begin immediate');
        setTimeout(() => other.exec('rollback'), 400);
        await trx('counters')
          .where({ id: 1 })
          .update({ n: Number(n) + 1 });
      }),
    );
    expect(inTransaction.stallMs).to.be.below(150);
    expect((await knex('counters').where({ id: 1 }).first('n')).n).to.equal(2);
  }).timeout(20_000);

  it('gives up once its wait is over, with an error that reads as the database unavailable (a 503)', async () => {
    other.exec('begin immediate');
    try {
      const started = performance.now();
      const { result: err, stallMs } = await longestStall(
        knex('counters')
          .where({ id: 1 })
          .increment('n', 1)
          .then(
            () => null,
            (e: unknown) => e,
          ),
      );
      expect((err as { code?: string })?.code).to.equal('SQLITE_BUSY');
      expect(isDatabaseUnavailable(err)).to.equal(true);
      expect(performance.now() - started).to.be.within(1_500, 6_000);
      expect(stallMs).to.be.below(150);
    } finally {
      other.exec('rollback');
    }
  }).timeout(20_000);
});
