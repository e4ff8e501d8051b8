import type { LockHandle, Locks } from '@switchboard/core';
import type { ReplayGuard } from '@switchboard/provider-kit';

/**
 * How long a token stays taken by a request in flight. A request that never ends (its process died)
 * leaves the token free again after this, so that the provider's retry is accepted.
 */
export const TOKEN_HOLD_MS = 60_000;
/**
 * What a guard on locks kept in this process's memory (no Redis) says it remembers: tokens go with a
 * restart, so a scheme signing no body keeps its timestamps this recent (5 minutes, as before session 30).
 */
export const MEMORY_REMEMBERED_SECONDS = 300;

/** The replay guard of one request to one endpoint: the tokens it takes are spent only with the events. */
export interface RequestReplayGuard extends ReplayGuard {
  /** The request's events are recorded: its tokens stay taken for as long as the adapter asked. */
  spend(): Promise<void>;
  /** The request failed: its tokens are given back. Never throws (a token not given back lapses). */
  release(): Promise<void>;
}

/**
 * One-time tokens (Mailgun's) across processes, as locks of the engine's Locks (Redis SET NX PX, or in
 * memory), keyed by endpoint: a token is one endpoint's, another endpoint may be given the same one. It is
 * held (TOKEN_HOLD_MS) while the request runs, so that a simultaneous delivery of it is refused, and spent
 * (kept for the adapter's time) once the events are recorded; never released once spent.
 */
export function requestReplayGuard(locks: Locks, endpointId: number, holdMs = TOKEN_HOLD_MS): RequestReplayGuard {
  const taken: Array<{ lock: LockHandle; ttlMs: number }> = [];
  return {
    ...(locks.durable ? {} : { rememberedSeconds: MEMORY_REMEMBERED_SECONDS }),
    async seen(key, ttlSeconds) {
      const ttlMs = ttlSeconds * 1000;
      const lock = await locks.acquire(`campaign:webhook-token:${endpointId}:${key}`, Math.min(holdMs, ttlMs));
      if (lock === null) return true;
      taken.push({ lock, ttlMs });
      return false;
    },
    async spend() {
      // A hold that lapsed during a slow request is taken again, unless a retry holds it already.
      for (const { lock, ttlMs } of taken.splice(0))
        if (!(await lock.extend(ttlMs))) await locks.acquire(lock.key, ttlMs);
    },
    async release() {
      await Promise.allSettled(taken.splice(0).map(({ lock }) => lock.release()));
    },
  };
}
