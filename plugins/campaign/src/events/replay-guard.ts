import type { Locks } from '@switchboard/core';
import type { ReplayGuard } from '@switchboard/provider-kit';

/**
 * One-time tokens (Mailgun's) remembered across processes for as long as a signature stays fresh: a
 * token is a lock taken and never released, which expires by itself (Redis SET NX PX, or in memory).
 */
export const replayGuardOn = (locks: Locks): ReplayGuard => ({
  async seen(key, ttlSeconds) {
    return (await locks.acquire(`campaign:webhook-token:${key}`, ttlSeconds * 1000)) === null;
  },
});
