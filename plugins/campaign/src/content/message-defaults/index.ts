export { messageDefaultsRoutes } from './routes';
export { MessageDefaultsService } from './service';
