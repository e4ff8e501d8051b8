import { defineJob } from '@switchboard/core';

/** Sends the changelog notices that are due (one job at a time; the minute's task wakes it too). */
export const CHANGELOG_NOTICES_JOB = defineJob<Record<string, never>>('campaign.changelog-notices');

/** Mails a changelog subscription's confirmation link (e-mail consent, issue 24). */
export const CHANGELOG_CONFIRMATION_JOB = defineJob<{ subscriptionId: number }>('campaign.changelog-confirmation');
