import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { createKnex } from '@switchboard/core';
import { inSqliteTurn } from '../sqlite-turns';

describe('campaign: batch imports take turns on SQLite', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'import-turns-'));
  const sqlite = createKnex(`sqlite:${path.join(dir, 'turns.sqlite')}`);
  const mysql = createKnex('mysql://root@127.0.0.1:3306/never_connected'); // no query is made
  after(async () => {
    await sqlite.destroy();
    await mysql.destroy();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** Two works started together, each taking a few turns of the event loop: what each saw of the other. */
  async function overlapOn(knex: typeof sqlite): Promise<string[]> {
    const events: string[] = [];
    const work = (name: string) => async () => {
      events.push(`${name} starts`);
      for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
      events.push(`${name} ends`);
    };
    await Promise.all([inSqliteTurn(knex, work('a')), inSqliteTurn(knex, work('b'))]);
    return events;
  }

  it('runs one import after the other on SQLite, and at once on MySQL', async () => {
    expect(await overlapOn(sqlite)).to.deep.equal(['a starts', 'a ends', 'b starts', 'b ends']);
    expect(await overlapOn(mysql)).to.deep.equal(['a starts', 'b starts', 'a ends', 'b ends']);
  });

  it('lets the next import run after one that failed', async () => {
    const failed = inSqliteTurn(sqlite, () => Promise.reject(new Error('bad batch')));
    const next = inSqliteTurn(sqlite, () => Promise.resolve('done'));
    expect(await failed.catch((err: Error) => err.message)).to.equal('bad batch');
    expect(await next).to.equal('done');
  });
});
