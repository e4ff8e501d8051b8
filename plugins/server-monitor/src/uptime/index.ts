// The uptime feature's front door: what the rest of the plugin may use (docs/architecture.md, feature folders).
export { uptimeRoutes } from './routes';
export { UPTIME_JOB, UptimeService } from './service';
