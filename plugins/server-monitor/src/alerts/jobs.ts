import { defineJob } from '@switchboard/core';

export const ALERT_JOB = defineJob<{ alertId: number }>('servermonitor.alert');
