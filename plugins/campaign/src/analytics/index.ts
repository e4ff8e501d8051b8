export { analyticsCommands } from './commands';
export { analyticsRoutes } from './routes';
