import path from 'node:path';
import { definePlugin, provide } from '@switchboard/core';
import { registerRoutes } from './routes';
import { USERS_DIRECTORY, UsersDirectoryService } from './users-directory';

const pkg = require('../../package.json') as { version: string };

export default definePlugin({
  id: 'users-projects',
  version: pkg.version,
  migrationsDir: path.join(__dirname, '../migrations'),
  resources: ['users', 'projects'],
  rateLimits: { windowSeconds: 60, perToken: { overall: 100 }, perAddress: 10 },
  // Other plugins read users through this service, never the users table (docs/decisions.md).
  provides: [provide(USERS_DIRECTORY, (ctx) => ctx.container.resolve(UsersDirectoryService))],
  routes: registerRoutes,
});

export { basePath } from './routes';
export { USERS_DIRECTORY } from './users-directory';
export type { DirectoryReader, DirectoryUser, UsersDirectory } from './users-directory';
