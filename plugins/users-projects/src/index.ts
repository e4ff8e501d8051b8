import path from 'node:path';
import { definePlugin } from '@switchboard/core';
import { registerRoutes } from './routes';

const pkg = require('../../package.json') as { version: string };

export default definePlugin({
  id: 'users-projects',
  version: pkg.version,
  migrationsDir: path.join(__dirname, '../migrations'),
  resources: ['users', 'projects'],
  rateLimits: { windowSeconds: 60, perToken: { overall: 100 }, perAddress: 10 },
  routes: registerRoutes,
});

export { basePath } from './routes';
