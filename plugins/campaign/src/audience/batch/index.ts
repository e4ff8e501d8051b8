export { batchRoutes } from './routes';
