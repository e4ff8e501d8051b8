export { WebhookOutbox } from './outbox';
export type { WebhookEvent } from './outbox';
export { processWebhookDeliveries, webhookDeliveriesTask } from './commands';
export { WEBHOOK_OPTIONS, webhookOptionsSchema } from './options';
export type { WebhookOptions } from './options';
export { subscriberCreated } from './outbox';
export { webhookRoutes } from './routes';
