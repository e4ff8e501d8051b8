export { inboundWebhookRoutes } from './inbound-webhooks/routes';
export { messageStatsRoutes } from './message-stats';
export {
  BUILT_IN_PROVIDERS,
  ProviderAdapters,
  loadProviderAdapters,
  providersOptionsSchema,
} from './provider-adapters';
export { receiveRoutes } from './receive-routes';
export { REMOTE_TEXT, remoteTextThrough } from './remote-text';
export { processStatsRebuilds, statsRebuildCommands } from './stats-rebuild-commands';
export { ADAPTER_DEADLINE_MS, DEFAULT_ADAPTER_DEADLINE_MS } from './provider-request';
