// The checks feature's front door: what the rest of the plugin may use (docs/architecture.md, feature folders).
export { checkRoutes, dispatchMessage, dispatchOutput } from './routes';
export { CheckDispatcher } from './dispatcher';
export { CheckWorker } from './check-worker';
export { CHECK_JOBS } from './jobs';
export { processChecks } from './process-checks';
export { CHECK_OPTIONS, checkOptionsSchema, DEFAULT_CHECK_OPTIONS } from './options';
export type { CheckOptions } from './options';
