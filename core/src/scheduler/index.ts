export { Scheduler } from './scheduler';
export type { ScheduledTask, SchedulerOptions } from './scheduler';
