/** A held lock; release() is safe to call twice and never releases someone else's lock. */
export interface LockHandle {
  readonly key: string;
  release(): Promise<void>;
  /** Pushes the expiry forward; false when the lock was lost meanwhile. */
  extend(ttlMs: number): Promise<boolean>;
}

/** Mutual exclusion across processes (Redis) or inside one process (memory). */
export interface Locks {
  /** True when a key outlives this process and is seen by the others (Redis, the database); else memory. */
  readonly durable?: boolean;
  /** Resolves with a handle, or null when another holder has the key. Never waits. */
  acquire(key: string, ttlMs: number): Promise<LockHandle | null>;
  close(): Promise<void>;
}
