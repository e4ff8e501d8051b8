import type { JobQueues } from '@switchboard/core';
import { TIERS } from '../shared/plans';
import type { CheckWorker } from './check-worker';
import { CHECK_JOBS } from './jobs';
import { CheckPlaces } from './places';

/**
 * Both tiers' check queues worked off in this process within `concurrency` places, premium first
 * (CheckPlaces). The premium queue takes as many jobs again as there are places, so in a premium round a
 * place that frees always has a premium check waiting for it, not a free one slipping in while the next
 * premium job is fetched (checks written in one commit free their places together).
 */
export function processChecks(queues: JobQueues, worker: CheckWorker, concurrency: number): CheckPlaces {
  const places = new CheckPlaces(concurrency);
  const taken = { premium: 2 * places.size, free: places.freeAtMost };
  for (const tier of TIERS)
    queues.get(CHECK_JOBS[tier]).process(taken[tier], (job) => places.run(tier, () => worker.run(job.data.serverId)));
  return places;
}
