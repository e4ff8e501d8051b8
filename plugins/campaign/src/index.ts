import path from 'node:path';
import { definePlugin } from '@switchboard/core';
import { subscriberRoutes } from './http/subscriber-routes';
import { batchRoutes } from './http/batch-routes';
import { listRoutes } from './http/list-routes';
import { confirmRoutes } from './http/confirm-routes';
import { senderProfileRoutes } from './http/sender-profile-routes';
import { messageRoutes } from './http/message-routes';
import { scheduleRoutes } from './http/schedule-routes';
import { changelogRoutes } from './http/changelog-routes';
import { ConfirmationMails, CONFIRMATION_JOB } from './audience/confirmation-mails';

const pkg = require('../../package.json') as { version: string };

export default definePlugin({
  id: 'campaign',
  version: pkg.version,
  migrationsDir: path.join(__dirname, '../migrations'),
  resources: ['subscribers', 'lists', 'messages', 'schedules', 'sender-profiles', 'analytics', 'webhooks', 'inbound-webhooks', 'changelog'],
  rateLimits: { windowSeconds: 3600, perToken: { overall: 1000, GET: 500, POST: 100, DELETE: 50 }, perAddress: 100 },
  routes(api, ctx) {
    const group = api.group({ prefix: '/api/campaign', tag: 'campaign', auth: 'token' });
    batchRoutes(group, ctx);
    subscriberRoutes(group, ctx);
    listRoutes(group, ctx);
    senderProfileRoutes(group, ctx);
    messageRoutes(group, ctx);
    scheduleRoutes(group, ctx);
    changelogRoutes(group, ctx);
    confirmRoutes(api, ctx);
  },
  jobs(queues, ctx) {
    const confirmations = ctx.container.resolve(ConfirmationMails);
    queues.get(CONFIRMATION_JOB).process(4, (job) => confirmations.send(job.data));
  },
});
