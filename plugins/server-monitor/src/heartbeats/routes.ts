import { ApiGroup, PluginContext } from '@switchboard/core';
import { failingAs, KEYED_ANSWERS, keyParam, successSchema } from '../shared/api';
import { MonitorKey } from '../shared/key';
import { HeartbeatService } from './service';

const tokenParams = {
  type: 'object',
  required: ['token'],
  // Any text: a token no heartbeat has, however long, is the spec's 404 (heartbeats' tokens are 64 or fewer).
  properties: { token: { type: 'string' } },
} as const;

/** GET /check/heartbeats/{api_key}, and the ping a customer's job calls (its token is the secret). */
export function heartbeatRoutes(group: ApiGroup, ctx: PluginContext): void {
  const key = ctx.container.resolve(MonitorKey);
  const heartbeats = ctx.container.resolve(HeartbeatService);
  group.get(
    '/check/heartbeats/:key',
    {
      summary: 'Detect missing heartbeat pings and alert (once per outage)',
      params: { type: 'object', required: ['key'], properties: { key: keyParam } },
      response: {
        schema: successSchema({ missing: { type: 'integer' }, healthy: { type: 'integer' } }, ['missing', 'healthy']),
      },
      answers: KEYED_ANSWERS,
    },
    async ({ params }) => {
      key.require(params.key);
      const result = await failingAs('Failed to check heartbeats', () => heartbeats.check());
      const message = result.busy
        ? 'A heartbeat check is already running'
        : `Heartbeats checked: ${result.missing} missing (${result.newlyMissing} newly alerted), ${result.healthy} healthy`;
      return { success: true, message, missing: result.missing, healthy: result.healthy };
    },
  );
  const ping = {
    summary: 'A heartbeat ping (GET, POST or HEAD; no API key: the token is the secret)',
    params: tokenParams,
    response: { schema: successSchema() },
    answers: { 404: 'no heartbeat has this token' },
  } as const;
  const handler = async ({ params }: { params: { token: string } }) => {
    await heartbeats.ping(params.token);
    return { success: true, message: 'Pong' };
  };
  // The operator contract names HEAD too: koa-router answers it on the GET route; the document says so.
  group.get('/ping/:token', { ...ping, head: true }, handler);
  group.post('/ping/:token', ping, handler);
}
