import path from 'node:path';
import { definePlugin, loadOnFirstUse, PluginContext } from '@switchboard/core';
import { checkOptionsSchema } from './checks';
import { heartbeatCommands } from './heartbeats';
import { notificationCommands } from './notifications';
import { serverCommands } from './servers';
import { monitorCommands } from './commands';
import { sslOptionsSchema } from './ssl';
import { monitorEnvSchema } from './shared/env';
import { USERS_DIRECTORY } from './shared/users-directory';
import type { MonitorOptions } from './engine-parts';

const pkg = require('../../package.json') as { version: string };

// Routes, jobs and their services load when an engine is opened, not when the CLI only lists its commands.
const parts = loadOnFirstUse(() => require('./engine-parts') as typeof import('./engine-parts'));

export default definePlugin<MonitorOptions>({
  id: 'server-monitor',
  version: pkg.version,
  // Alerts' recipients and the notification setting's administrators: users-projects' directory, never its
  // tables. Its provider is ordered first, so an upgrade's migration 1.2 (which read users) still runs after it.
  needs: [USERS_DIRECTORY],
  migrationsDir: path.join(__dirname, '../migrations'),
  // API tokens' permissions for the servers API (servers:read, servers:write).
  resources: ['servers'],
  optionsSchema: {
    type: 'object',
    additionalProperties: false,
    properties: { checks: checkOptionsSchema, ssl: sslOptionsSchema },
  },
  envSchema: monitorEnvSchema,
  // Wrong keys per client address (the spec's keyed routes count nothing else); perToken: the servers API
  // (by API token, for people on call and their scripts), 600 per 10 minutes (docs/decisions.md).
  rateLimits: { windowSeconds: 600, perToken: { overall: 600 }, perAddress: 20 },
  register: (ctx) => parts().register(ctx),
  routes: (api, ctx) => parts().routes(api, ctx as PluginContext),
  jobs: (queues, ctx) => parts().jobs(queues, ctx as PluginContext),
  recurring: (ctx) => parts().recurring(ctx as PluginContext),
  commands(program, context) {
    const ctx = context as () => Promise<PluginContext>;
    heartbeatCommands(program, ctx);
    monitorCommands(program, ctx);
    notificationCommands(program, ctx);
    serverCommands(program, ctx);
  },
  start: (ctx) => parts().start(ctx as PluginContext),
  stop: (ctx) => parts().stop(ctx as PluginContext),
});
