import { defineJob } from '@switchboard/core';

export interface ConfirmationJob {
  organizationId: number;
  subscriberId: number;
}

export const CONFIRMATION_JOB = defineJob<ConfirmationJob>('campaign.confirmation-mail');
