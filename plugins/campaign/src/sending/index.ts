export { processSendRanges, sendWatchdogTask } from './jobs';
export { SENDING_OPTIONS, sendingOptionsSchema } from './options';
export type { SendingOptions } from './options';
export { sendingRoutes } from './routes';
export { sendSchema } from './schemas';
export { SendStore } from './send-store';
export { trackingRoutes } from './tracking-routes';
export { unsubscribeRoutes } from './unsubscribe-routes';
