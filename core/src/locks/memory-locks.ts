import crypto from 'node:crypto';
import type { LockHandle, Locks } from './types';

/** Locks inside one process: enough for the embedded default, where there is one process. */
export class MemoryLocks implements Locks {
  private readonly held = new Map<string, { token: string; expiresAt: number }>();

  async acquire(key: string, ttlMs: number): Promise<LockHandle | null> {
    const current = this.held.get(key);
    if (current && current.expiresAt > Date.now()) return null;
    const token = crypto.randomUUID();
    this.held.set(key, { token, expiresAt: Date.now() + ttlMs });
    const ours = () => {
      const entry = this.held.get(key);
      return entry !== undefined && entry.token === token && entry.expiresAt > Date.now();
    };
    return {
      key,
      release: async () => {
        if (ours()) this.held.delete(key);
      },
      extend: async (ms: number) => {
        if (!ours()) return false;
        this.held.set(key, { token, expiresAt: Date.now() + ms });
        return true;
      },
    };
  }

  async close(): Promise<void> {
    this.held.clear();
  }
}
