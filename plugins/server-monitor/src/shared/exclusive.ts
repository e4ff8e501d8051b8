import type { Locks } from '@switchboard/core';

/**
 * Runs an operation only where no other run of it is under way, in any process (core Locks, with an
 * expiry kept pushed forward while it runs, so a crashed run frees it). Null: another run holds it.
 */
export async function exclusive<T>(locks: Locks, name: string, work: () => Promise<T>): Promise<T | null> {
  const ttlMs = 60_000;
  const lock = await locks.acquire(`servermonitor.${name}`, ttlMs);
  if (!lock) return null;
  const keep = setInterval(() => void lock.extend(ttlMs).catch(() => undefined), ttlMs / 3);
  try {
    return await work();
  } finally {
    clearInterval(keep);
    await lock.release();
  }
}
