import path from 'node:path';
import { definePlugin, loadOnFirstUse } from '@switchboard/core';
import { changelogCommands } from './changelog';
import { searchCompactionCommands, searchOptionsSchema } from './audience/search';
import { sendingOptionsSchema } from './sending';
import { statsRebuildCommands } from './events';
import { analyticsCommands } from './analytics';
import { webhookOptionsSchema } from './webhooks';
import { providersOptionsSchema } from './events';

const pkg = require('../../package.json') as { version: string };

// Routes, jobs and their services load when an engine is opened, not when the CLI only lists its commands.
const parts = loadOnFirstUse(() => require('./engine-parts') as typeof import('./engine-parts'));

export default definePlugin({
  id: 'campaign',
  version: pkg.version,
  migrationsDir: path.join(__dirname, '../migrations'),
  resources: [
    'subscribers',
    'lists',
    'messages',
    'schedules',
    'sender-profiles',
    'analytics',
    'webhooks',
    'inbound-webhooks',
    'changelog',
  ],
  optionsSchema: {
    type: 'object',
    additionalProperties: false,
    properties: {
      sending: sendingOptionsSchema,
      providers: providersOptionsSchema,
      webhooks: webhookOptionsSchema,
      search: searchOptionsSchema,
    },
  },
  register: (ctx) => parts().register(ctx),
  rateLimits: { windowSeconds: 3600, perToken: { overall: 1000, GET: 500, POST: 100, DELETE: 50 }, perAddress: 100 },
  routes: (api, ctx) => parts().routes(api, ctx),
  jobs: (queues, ctx) => parts().jobs(queues, ctx),
  recurring: (ctx) => parts().recurring(ctx),
  commands(program, context) {
    searchCompactionCommands(program, context);
    statsRebuildCommands(program, context);
    analyticsCommands(program, context);
    changelogCommands(program, context);
  },
});
