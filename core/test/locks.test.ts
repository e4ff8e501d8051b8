import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import type { Knex } from 'knex';
import { createLocks } from '../src/locks';
import { DatabaseLocks, THIS_PROCESS } from '../src/locks/database-locks';
import { MemoryLocks } from '../src/locks/memory-locks';
import type { LockHandle, Locks } from '../src/locks/types';
import { createKnex } from '../src/db/knex';
import { up as createProcessLocks } from '../migrations/1.2/01-create-process-locks';
import {
  createMysqlDatabase,
  deleteRedisKeys,
  requiredRedisUrl,
  servicesRequired,
  uniqueSuffix,
  waitFor,
} from '../src/testing';

/** better-sqlite3 itself: a write of another connection, run synchronously inside a knex event. */
const Database = require('better-sqlite3') as new (file: string) => {
  prepare(sql: string): { run(...values: unknown[]): unknown };
  close(): void;
};

/** A database as two processes would share it: each opens its own connections. */
interface SharedDatabase {
  open(): Knex;
  drop(): Promise<void>;
  /** SQLite's file, for a connection of another library. */
  file?: string;
}

const sqliteFile = async (): Promise<SharedDatabase> => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'switchboard-locks-'));
  const file = path.join(dir, 'locks.sqlite');
  return {
    file,
    open: () => createKnex(`sqlite:${file}`),
    drop: async () => fs.rmSync(dir, { recursive: true, force: true }),
  };
};
/** Null when MySQL does not answer and REQUIRE_SERVICES is not set (the suite skips, as the others do). */
const mysqlDatabase = async (): Promise<SharedDatabase | null> => {
  const db = await createMysqlDatabase().catch((err) => {
    if (servicesRequired()) throw err;
    return null;
  });
  return db && { open: () => createKnex(db.url), drop: () => db.drop() };
};

interface Driver {
  name: string;
  /** The locks under test, and how to close them; null skips (a server not answering without REQUIRE_SERVICES). */
  open(prefix: string): Promise<{ locks: Locks; close(): Promise<void> } | null>;
}

/** Database locks on a migrated database; every knex made is closed with them. */
const databaseDriver = (name: string, shared: () => Promise<SharedDatabase | null>): Driver => ({
  name,
  async open() {
    const database = await shared();
    if (!database) return null;
    const knex = database.open();
    await createProcessLocks(knex);
    return {
      locks: new DatabaseLocks(knex),
      close: async () => {
        await knex.destroy();
        await database.drop();
      },
    };
  },
});

const drivers: Driver[] = [
  { name: 'in-process', open: async (prefix) => ({ locks: createLocks({ prefix }), close: async () => undefined }) },
  {
    name: 'Redis',
    async open(prefix) {
      const redisUrl = await requiredRedisUrl();
      if (!redisUrl) return null;
      const locks = createLocks({ redisUrl, prefix });
      return {
        locks,
        close: async () => {
          await locks.close();
          await deleteRedisKeys(redisUrl, prefix);
        },
      };
    },
  },
  databaseDriver('database, SQLite', sqliteFile),
  databaseDriver('database, MySQL', mysqlDatabase),
];

for (const driver of drivers) {
  describe(`locks [${driver.name}]`, function () {
    let locks: Locks;
    let close: (() => Promise<void>) | undefined;

    before(async function () {
      const opened = await driver.open(`sbt_${uniqueSuffix()}`);
      if (!opened) this.skip();
      ({ locks, close } = opened!);
    });
    after(async () => {
      await close?.();
    });

    /** Takes the key as soon as its current holder's lock lapses. */
    const takeOnceFree = async (key: string, ttlMs: number): Promise<LockHandle> => {
      let handle: LockHandle | null = null;
      await waitFor(async () => (handle = await locks.acquire(key, ttlMs)) !== null, 3000);
      return handle!;
    };

    it('gives a key to one holder at a time, and other keys to others', async () => {
      const first = await locks.acquire('exclusive', 5000);
      expect(first?.key).to.equal('exclusive');
      expect(await locks.acquire('exclusive', 5000)).to.equal(null);
      const other = await locks.acquire('another', 5000);
      expect(other).not.to.equal(null);
      await first!.release();
      await first!.release();
      const second = await locks.acquire('exclusive', 5000);
      expect(second).not.to.equal(null);
      await second!.release();
      await other!.release();
    });

    it('frees a key when its holder lets it expire', async () => {
      const started = Date.now();
      expect(await locks.acquire('expiring', 200)).not.to.equal(null);
      expect(await locks.acquire('expiring', 5000)).to.equal(null);
      const next = await takeOnceFree('expiring', 5000);
      expect(Date.now() - started).to.be.at.least(190);
      await next.release();
    });

    it('never releases or extends a lock that passed to someone else', async () => {
      const stale = await locks.acquire('handover', 100);
      const current = await takeOnceFree('handover', 5000);
      await stale!.release();
      expect(await stale!.extend(5000)).to.equal(false);
      expect(await locks.acquire('handover', 5000)).to.equal(null);
      expect(await current.extend(5000)).to.equal(true);
      await current.release();
    });

    it('keeps an extended lock past its first expiry', async () => {
      const started = Date.now();
      const lock = await locks.acquire('extended', 200);
      expect(await lock!.extend(1000)).to.equal(true);
      const next = await takeOnceFree('extended', 5000);
      expect(Date.now() - started).to.be.at.least(990);
      expect(await lock!.extend(1000)).to.equal(false);
      await next.release();
    });
  });
}

describe('memory locks', () => {
  it('forgets lapsed keys as new ones come: memory stays near what is held, not what was ever taken', async () => {
    let now = 0;
    const locks = new MemoryLocks(() => now);
    const kept = await locks.acquire('held', 10_000_000);
    // One-time tokens: each key taken once and left to lapse after 10 minutes, 20 a second for 90 minutes.
    for (now = 0; now < 5_400_000; now += 1_000)
      for (let k = 0; k < 20; k++) await locks.acquire(`token:${now}.${k}`, 600_000);
    // 12,000 tokens are held at the end; swept, at most twice what a sweep left (108,001 without sweeps).
    expect(locks.size).to.be.at.most(24_000 + 20 + 1);
    expect(await locks.acquire('held', 1_000), 'a lock still held is kept').to.equal(null);
    await kept!.release();
  });
});

for (const [name, shared] of [
  ['SQLite', sqliteFile],
  ['MySQL', mysqlDatabase],
] as const)
  describe(`database locks across processes [${name}]`, () => {
    let database: SharedDatabase | null;
    const knexes: Knex[] = [];
    before(async function () {
      database = await shared();
      if (!database) return this.skip();
      knexes.push(database.open(), database.open());
      await createProcessLocks(knexes[0]);
    });
    after(async () => {
      for (const knex of knexes) await knex.destroy();
      await database?.drop();
    });

    it("gives a name to one process's connections at a time, and the other once it is released", async () => {
      const [first, second] = knexes.map((knex) => new DatabaseLocks(knex));
      const held = await first.acquire('scheduler:leader', 30_000);
      expect(held).not.to.equal(null);
      expect(await second.acquire('scheduler:leader', 30_000)).to.equal(null);
      expect(await held!.extend(30_000)).to.equal(true);
      await held!.release();
      const taken = await second.acquire('scheduler:leader', 30_000);
      expect(taken).not.to.equal(null);
      expect(await first.acquire('scheduler:leader', 30_000)).to.equal(null);
      await taken!.release();
    });

    it('takes over at once from a holder of this machine that died or an earlier run of this process id, not from another machine', async () => {
      // Above Linux's largest process id: no such process runs.
      const dead = { ...THIS_PROCESS, pid: 2 ** 22 + 1 };
      const earlierRun = { ...THIS_PROCESS, started: THIS_PROCESS.started - 60_000 };
      // Another container of the same host name has another process id namespace: its ids are not ours to judge.
      const elsewhere = { ...THIS_PROCESS, machine: `${THIS_PROCESS.machine} other`, pid: 2 ** 22 + 1 };
      for (const [holder, takenOver] of [
        [dead, true],
        [earlierRun, true],
        [elsewhere, false],
      ] as const) {
        const held = await new DatabaseLocks(knexes[0], { self: holder }).acquire('scheduler:leader', 30_000);
        expect(held).not.to.equal(null);
        const taken = await new DatabaseLocks(knexes[1]).acquire('scheduler:leader', 30_000);
        expect([holder, taken !== null]).to.deep.equal([holder, takenOver]);
        await (taken ?? held)!.release();
      }
    });

    if (name === 'SQLite')
      it("keeps a lapsed row its holder extends between another's read and delete", async () => {
        const holder = new DatabaseLocks(knexes[0], { self: { ...THIS_PROCESS, machine: 'another machine' } });
        const lapsesAt = Date.now() + 20;
        const lapsing = await holder.acquire('race', 20);
        expect(lapsing).not.to.equal(null);
        await waitFor(() => Date.now() > lapsesAt, 2_000);
        // The holder's extend lands right as the other process is about to delete the row it read lapsed.
        const raw = new Database(database!.file!);
        let extended = false;
        knexes[1].on('query', (q: { method?: string }) => {
          if (q.method !== 'del' || extended) return;
          extended = true;
          raw.prepare('update process_locks set expires_at = ? where name = ?').run(Date.now() + 30_000, 'race');
        });
        try {
          expect(await new DatabaseLocks(knexes[1]).acquire('race', 30_000)).to.equal(null);
          expect(extended).to.equal(true);
        } finally {
          knexes[1].removeAllListeners('query');
          raw.close();
          await lapsing!.release();
        }
      });

    it('keeps the lock in this process while the database is not migrated to core 1.2, saying so, and moves it to the table once migrated', async () => {
      const told: unknown[] = [];
      await knexes[0].schema.renameTable('process_locks', 'process_locks_away');
      const locks = new DatabaseLocks(knexes[0], { onSchemaBehind: (err) => told.push(err) });
      let held: LockHandle | null;
      try {
        held = await locks.acquire('scheduler:leader', 30_000);
        expect(held).not.to.equal(null);
        expect(await locks.acquire('scheduler:leader', 30_000)).to.equal(null);
        expect(await held!.extend(30_000)).to.equal(true);
        expect(told).to.have.length(3);
      } finally {
        await knexes[0].schema.renameTable('process_locks_away', 'process_locks');
      }
      // Migrated meanwhile: the in-process lock is given up, and taken again where the other process sees it.
      expect(await held!.extend(30_000)).to.equal(false);
      const again = await locks.acquire('scheduler:leader', 30_000);
      expect(again).not.to.equal(null);
      expect(await new DatabaseLocks(knexes[1]).acquire('scheduler:leader', 30_000)).to.equal(null);
      await again!.release();
    });
  });
