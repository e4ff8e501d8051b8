export { addDailyMetrics, dayOf, readDailyMetrics, sumDailyMetrics } from './daily-metrics';
export type { Metrics } from './daily-metrics';
export { forgetEngagement } from './engagement-days';
export { addMailMetrics, MailCounts } from './mail-counts';
export { MAIL_COUNTER, MAIL_EVENTS, METRIC, subscriberMetrics } from './metric-names';
export type { MailEvent as MailMetricEvent, SubscriberChange } from './metric-names';
