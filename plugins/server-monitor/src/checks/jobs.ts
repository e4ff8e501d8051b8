import { defineJob } from '@switchboard/core';
import type { Tier } from '../shared/plans';

export interface CheckJob {
  serverId: number;
}

/** A queue per tier; a worker takes premium checks first (process-checks.ts). */
export const CHECK_JOBS: Record<Tier, ReturnType<typeof defineJob<CheckJob>>> = {
  premium: defineJob<CheckJob>('servermonitor.check-premium'),
  free: defineJob<CheckJob>('servermonitor.check-free'),
};
