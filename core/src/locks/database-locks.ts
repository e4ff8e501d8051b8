import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import type { Knex } from 'knex';
import { isSchemaBehind } from '../db/errors';
import { toInt } from '../db/values';
import { MemoryLocks } from './memory-locks';
import type { LockHandle, Locks } from './types';

const TABLE = 'process_locks';

/** A lock's holder: the process ids it can be judged by, and when it started (a restart may reuse the id). */
export interface LockHolder {
  /** The host and, on Linux, the process id namespace: two containers of one host name see each other's ids as nobody's. */
  machine: string;
  pid: number;
  started: number;
}

function pidNamespace(): string {
  try {
    return fs.readlinkSync('/proc/self/ns/pid');
  } catch {
    return '';
  }
}

export const THIS_PROCESS: LockHolder = {
  // Within the holder column (191 characters) as JSON, whatever the host name.
  machine: `${os.hostname().slice(0, 100)} ${pidNamespace()}`.trim(),
  pid: process.pid,
  started: Math.round(Date.now() - process.uptime() * 1000),
};

/** Whether a process of this machine is running (EPERM: it runs, as another user). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

const holderOf = (stored: unknown): LockHolder | null => {
  try {
    const h = JSON.parse(String(stored)) as LockHolder;
    return typeof h.machine === 'string' && Number.isInteger(h.pid) && typeof h.started === 'number' ? h : null;
  } catch {
    return null;
  }
};

/**
 * A holder known to be gone: a process of this machine that no longer runs, or an earlier run of this
 * process's id. Another machine's holder (or one not read) is waited for until its lock lapses.
 */
function holderGone(stored: unknown, self: LockHolder = THIS_PROCESS, isRunning = running): boolean {
  const holder = holderOf(stored);
  if (!holder || holder.machine !== self.machine) return false;
  if (holder.pid === self.pid) return holder.started !== self.started;
  return !isRunning(holder.pid);
}

export interface DatabaseLocksOptions {
  /** Told while the table is missing (a database not migrated to core 1.2): locks then stay in this process. */
  onSchemaBehind?(err: unknown): void;
  /** This process as a holder (tests). */
  self?: LockHolder;
}

/**
 * Locks in the database (core 1.2's `process_locks`), across the processes that share it without a
 * Redis: two `serve` processes on one SQLite file (the embedded default) run one scheduler. A lock that
 * lapsed, or whose holder is a process of this machine that died, is taken over; a held one is only read
 * (no write while another holds it), and extended in the database once a third of its time has passed,
 * so an idle process writes every few seconds at most (SQLite's writer waits synchronously while another
 * process writes). Release and extend act only while the row holds the holder's token.
 */
export class DatabaseLocks implements Locks {
  readonly durable = true;
  private readonly inProcess = new MemoryLocks();
  private readonly self: LockHolder;

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
      return this.inProcessLock(name, ttlMs, err);
    }
  }

  async close(): Promise<void> {
    await this.inProcess.close();
  }

  private async take(name: string, ttlMs: number): Promise<LockHandle | null> {
    const now = Date.now();
    const current = await this.knex(TABLE).where({ name }).first('token', 'holder', 'expires_at');
    if (current) {
      const gone = holderGone(current.holder, this.self);
      if (!gone && toInt(current.expires_at) > now) return null;
      // A lapsed row only while it still is: its holder may have extended it since the read.
      const stale = this.knex(TABLE).where({ name, token: current.token });
      await (gone ? stale : stale.andWhere('expires_at', '<=', now)).delete();
    }
    const token = crypto.randomUUID();
    await this.knex(TABLE)
      .insert({ name, token, holder: JSON.stringify(this.self), expires_at: now + ttlMs })
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
        try {
          if (toInt(await ours().update({ expires_at: at + ms })) !== 1) return false;
        } catch (err) {
          // The table went (a rollback of core 1.2): lost here, taken again in this process.
          if (isSchemaBehind(err)) return false;
          throw err;
        }
        until = at + ms;
        return true;
      },
    };
  }

  /**
   * The lock in this process while the table is missing, said at each try: once the table is there (the
   * operator ran migrate), extending it fails, and the caller takes it again in the database.
   */
  private async inProcessLock(name: string, ttlMs: number, err: unknown): Promise<LockHandle | null> {
    this.options.onSchemaBehind?.(err);
    const handle = await this.inProcess.acquire(name, ttlMs);
    if (!handle) return null;
    return {
      key: name,
      release: () => handle.release(),
      extend: async (ms: number) => {
        if (await this.tableThere()) {
          await handle.release();
          return false;
        }
        return handle.extend(ms);
      },
    };
  }

  private async tableThere(): Promise<boolean> {
    try {
      await this.knex(TABLE).first('name');
      return true;
    } catch (err) {
      if (!isSchemaBehind(err)) throw err;
      this.options.onSchemaBehind?.(err);
      return false;
    }
  }
}
