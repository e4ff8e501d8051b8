import crypto from 'node:crypto';
import type { LockHandle, Locks } from './types';

/** Locks inside one process: enough for the embedded default, where there is one process. */
export class MemoryLocks implements Locks {
  readonly durable = false;
  private readonly held = new Map<string, { token: string; expiresAt: number }>();
  /** The size at which lapsed locks are swept next: twice what the last sweep left, at least 1,000. */
  private sweepAt = 1_000;

  constructor(private readonly now: () => number = Date.now) {}

  /** Locks held now or lapsed and not yet swept. */
  get size(): number {
    return this.held.size;
  }

  async acquire(key: string, ttlMs: number): Promise<LockHandle | null> {
    // Most keys are taken once and left to lapse (a provider's one-time token, kept for hours): without a
    // sweep every one stayed in memory for the life of the process.
    if (this.held.size >= this.sweepAt) this.sweep();
    const current = this.held.get(key);
    if (current && current.expiresAt > this.now()) return null;
    const token = crypto.randomUUID();
    this.held.set(key, { token, expiresAt: this.now() + ttlMs });
    const ours = () => {
      const entry = this.held.get(key);
      return entry !== undefined && entry.token === token && entry.expiresAt > this.now();
    };
    return {
      key,
      release: async () => {
        if (ours()) this.held.delete(key);
      },
      extend: async (ms: number) => {
        if (!ours()) return false;
        this.held.set(key, { token, expiresAt: this.now() + ms });
        return true;
      },
    };
  }

  private sweep(): void {
    const now = this.now();
    for (const [key, entry] of this.held) if (entry.expiresAt <= now) this.held.delete(key);
    this.sweepAt = Math.max(1_000, 2 * this.held.size);
  }

  async close(): Promise<void> {
    this.held.clear();
  }
}
