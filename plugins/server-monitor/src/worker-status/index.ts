// The worker-status feature's front door: what the rest of the plugin may use (docs/architecture.md, feature folders).
export { workerStatusRoutes } from './routes';
export { WorkerStatusService } from './service';
export { CapacityService } from './capacity';
