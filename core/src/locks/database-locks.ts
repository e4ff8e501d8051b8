import crypto from 'node:crypto';
import type { Knex } from 'knex';
import { toInt } from '../db/values';
import type { LockHandle, Locks } from './types';

const TABLE = 'process_locks';

/**
 * Locks in the database (core 1.2's `process_locks`), across the processes that share it without a
 * Redis: two `serve` processes on one SQLite file (the embedded default) run one scheduler. A lock that
 * lapsed is taken over; release and extend act only while the row still holds the holder's token.
 */
export class DatabaseLocks implements Locks {
  constructor(private readonly knex: Knex) {}

  async acquire(name: string, ttlMs: number): Promise<LockHandle | null> {
    const token = crypto.randomUUID();
    const now = Date.now();
    await this.knex(TABLE).where({ name }).andWhere('expires_at', '<=', now).delete();
    await this.knex(TABLE)
      .insert({ name, token, expires_at: now + ttlMs })
      .onConflict('name')
      .ignore();
    // Whoever inserted first holds it: each reads the row back.
    const held = await this.knex(TABLE).where({ name }).first('token');
    if (held?.token !== token) return null;
    const ours = () => this.knex(TABLE).where({ name, token });
    return {
      key: name,
      release: async () => {
        await ours().delete();
      },
      extend: async (ms: number) => toInt(await ours().update({ expires_at: Date.now() + ms })) === 1,
    };
  }

  async close(): Promise<void> {}
}
