export { serverRoutes } from './routes';
export { ServersService } from './service';
export type { NewServer, Server } from './schemas';
export { serverCommands } from './commands';
