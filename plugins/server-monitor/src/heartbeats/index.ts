// The heartbeats feature's front door: what the rest of the plugin may use (docs/architecture.md, feature folders).
export { heartbeatRoutes } from './routes';
export { heartbeatCommands } from './commands';
export { HeartbeatService } from './service';
