import crypto from 'node:crypto';
import os from 'node:os';
import type { Knex } from 'knex';
import { isSchemaBehind } from '../db/errors';
import { toInt } from '../db/values';
import { MemoryLocks } from './memory-locks';
import type { LockHandle, Locks } from './types';

const TABLE = 'process_locks';

/** This process as a lock's holder: host, process id, and when it started (a restart may reuse the id). */
const THIS_PROCESS = `${os.hostname()} ${process.pid} ${Math.round(Date.now() - process.uptime() * 1000)}`;

/** Whether a process of this host is running (EPERM: it runs, as another user). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * A holder known to be gone: a process of this host that no longer runs, or an earlier run of this
 * process's id (a container restarted, its id 1 again). Another host's holder is waited for until its
 * lock lapses.
 */
export function holderGone(holder: string, self = THIS_PROCESS, isRunning = running): boolean {
  const [host, pid, started] = holder.split(' ');
  const [ownHost, ownPid, ownStart] = self.split(' ');
  if (host !== ownHost) return false;
  if (pid === ownPid) return started !== ownStart;
  return !isRunning(Number(pid));
}

export interface DatabaseLocksOptions {
  /** Told when the table is missing (a database not migrated to core 1.2): locks then stay in this process. */
  onSchemaBehind?(err: unknown): void;
  /** This process as a holder (tests). */
  self?: string;
}

/**
 * Locks in the database (core 1.2's `process_locks`), across the processes that share it without a
 * Redis: two `serve` processes on one SQLite file (the embedded default) run one scheduler. A lock that
 * lapsed, or whose holder is a process of this host that died, is taken over; a held one is only read
 * (no write while another holds it), and extended in the database at most every third of its time, so
 * an idle process writes every few seconds at most (SQLite's writer waits synchronously while another
 * process writes). Release and extend act only while the row holds the holder's token.
 */
export class DatabaseLocks implements Locks {
  private readonly inProcess = new MemoryLocks();
  private readonly self: string;

  constructor(
    private readonly knex: Knex,
    private readonly options: DatabaseLocksOptions = {},
  ) {
    this.self = options.self ?? THIS_PROCESS;
  }

  async acquire(name: string, ttlMs: number): Promise<LockHandle | null> {
    try {
      return await this.take(name, ttlMs);
    } catch (err) {
      if (!isSchemaBehind(err)) throw err;
      this.options.onSchemaBehind?.(err);
      return this.inProcess.acquire(name, ttlMs);
    }
  }

  async close(): Promise<void> {
    await this.inProcess.close();
  }

  private async take(name: string, ttlMs: number): Promise<LockHandle | null> {
    const now = Date.now();
    const current = await this.knex(TABLE).where({ name }).first('token', 'holder', 'expires_at');
    if (current && toInt(current.expires_at) > now && !holderGone(String(current.holder), this.self)) return null;
    if (current) await this.knex(TABLE).where({ name, token: current.token }).delete();
    const token = crypto.randomUUID();
    await this.knex(TABLE)
      .insert({ name, token, holder: this.self, expires_at: now + ttlMs })
      .onConflict('name')
      .ignore();
    // Whoever inserted first holds it: each reads the row back.
    const held = await this.knex(TABLE).where({ name }).first('token');
    if (held?.token !== token) return null;
    const ours = () => this.knex(TABLE).where({ name, token });
    let until = now + ttlMs;
    return {
      key: name,
      release: async () => {
        await ours().delete();
      },
      extend: async (ms: number) => {
        const at = Date.now();
        // Written again once a third of the time asked for has passed: until then the row holds it long enough.
        if (until - at > (ms * 2) / 3) return true;
        if (toInt(await ours().update({ expires_at: at + ms })) !== 1) return false;
        until = at + ms;
        return true;
      },
    };
  }
}
