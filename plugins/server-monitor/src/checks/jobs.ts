import { defineJob } from '@switchboard/core';
import type { Tier } from '../shared/plans';

export interface CheckJob {
  serverId: number;
}

/** A queue per tier, so that free servers never wait behind premium ones or the other way round. */
export const CHECK_JOBS: Record<Tier, ReturnType<typeof defineJob<CheckJob>>> = {
  premium: defineJob<CheckJob>('servermonitor.check-premium'),
  free: defineJob<CheckJob>('servermonitor.check-free'),
};
