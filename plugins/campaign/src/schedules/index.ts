export { nextRunAt } from './next-run';
export type { Recurrence } from './next-run';
export { scheduleRoutes } from './routes';
