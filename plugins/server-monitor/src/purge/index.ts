// The purge feature's front door: what the rest of the plugin may use (docs/architecture.md, feature folders).
export { purgeOutput, purgeRoutes } from './routes';
export { PurgeService } from './service';
