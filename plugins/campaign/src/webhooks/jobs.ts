import { defineJob } from '@switchboard/core';

/** Delivers what is due (one run at a time across processes; the scheduler wakes it too). */
export const WEBHOOK_DELIVERIES_JOB = defineJob<Record<string, never>>('campaign.webhook-deliveries');
