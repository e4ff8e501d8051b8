import { AppError, ApiGroup, PluginContext } from '@switchboard/core';
import { MonitorKey } from './key';
import { percentDecoded } from './percent-decoded';

/**
 * Any other GET under the prefix: the spec puts the key last on every route, so a path without a valid
 * key last is refused as the spec says (403 Invalid API key); with one, there is no such route (404).
 * Registered after every other route.
 */
export function fallbackRoutes(group: ApiGroup, ctx: PluginContext): void {
  const key = ctx.container.resolve(MonitorKey);
  group.get(
    '/*rest',
    {
      summary: 'Any other path: 403 Invalid API key without the key as its last segment, else 404',
      response: { schema: { type: 'object' } },
      answers: { 403: 'Invalid API key', 404: 'No such route' },
      unpublished: true,
    },
    async ({ ctx: http }) => {
      // A last segment that is no valid percent-encoding holds no key either (a 403, not a URIError's 500).
      const last = percentDecoded(http.path.split('/').pop() ?? '');
      if (!key.holds(last || undefined)) throw new AppError('AUTH_INSUFFICIENT_PERMISSIONS', 'Invalid API key');
      throw new AppError('RESOURCE_NOT_FOUND', `No route for GET ${http.path.replace(/[^/]+$/, '{api_key}')}`);
    },
  );
}
