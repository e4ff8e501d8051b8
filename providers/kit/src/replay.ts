import type { ReplayGuard } from './types';

/**
 * One-time tokens remembered in this process until they expire: for tests and a single embedded process.
 * Processes that share work share a guard backed by their database or Redis.
 */
export function memoryReplayGuard(now: () => number = Date.now): ReplayGuard {
  const expiries = new Map<string, number>();
  return {
    async seen(key, ttlSeconds) {
      const at = now();
      for (const [stored, until] of expiries) if (until <= at) expiries.delete(stored);
      if (expiries.has(key)) return true;
      expiries.set(key, at + ttlSeconds * 1000);
      return false;
    },
  };
}
