import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { createKnex } from '../src';

/**
 * better-sqlite3 runs statements synchronously: without a turn of the event loop between them, a
 * transaction's statements were one stretch that every other request waited behind (issue 26). A turn
 * comes before a statement once 10 ms have gone by since the last one.
 */
describe('SQLite statements leave the event loop a turn', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sqlite-turns-'));
  const knex = createKnex(`sqlite:${path.join(dir, 'turns.sqlite')}`);
  after(async () => {
    await knex.destroy();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('runs a callback queued inside a transaction before the next statement once 10 ms have gone by', async () => {
    const order: string[] = [];
    await knex.transaction(async (trx) => {
      await trx.raw('select 1');
      setImmediate(() => order.push('turn'));
      const until = performance.now() + 15; // synchronous work between two statements
      while (performance.now() < until);
      await trx.raw('select 2');
      order.push('statement 2');
      await trx.raw('select 3');
      order.push('statement 3');
    });
    expect(order).to.deep.equal(['turn', 'statement 2', 'statement 3']);
  });

  it('keeps the dialect name the rest of the engine reads', () => {
    expect(knex.client.config.client).to.equal('better-sqlite3');
  });
});
