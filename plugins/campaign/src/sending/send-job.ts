import { defineJob } from '@switchboard/core';

/** The queued recipients of one send whose subscriber ids are in [from, to). */
export interface SendRangeJob {
  sendId: number;
  from: number;
  to: number;
}

export const SEND_RANGE_JOB = defineJob<SendRangeJob>('campaign.send-range');

/** One job id per range: a range already waiting or running is not queued twice. */
export const rangeJobId = (job: SendRangeJob) => `send-${job.sendId}-${job.from}-${job.to}`;
