export { analyticsCommands } from './commands';
export { analyticsRoutes } from './routes';
export { AnalyticsRebuild } from './rebuild';
