import { ApiGroup, PluginContext } from '@switchboard/core';
import { failingAs, idAndKey, KEYED_ANSWERS, keyParam, serverId, successSchema } from '../shared/api';
import { MonitorKey } from '../shared/key';
import { UptimeService } from './service';

const keyOnly = { type: 'object', required: ['key'], properties: { key: keyParam } } as const;

/** calculate, calculate/server/{id} and calculate/all. */
export function uptimeRoutes(group: ApiGroup, ctx: PluginContext): void {
  const key = ctx.container.resolve(MonitorKey);
  const uptime = ctx.container.resolve(UptimeService);
  const failed = 'Failed to queue the uptime calculation';
  group.get(
    '/calculate/server/:id/:key',
    {
      summary: 'Mark one server for uptime recalculation and queue the job',
      params: idAndKey,
      response: { schema: successSchema() },
      answers: {
        ...KEYED_ANSWERS,
        400: 'the server id is not an integer',
        404: 'Server with ID <server_id> not found (also for an integer that is no id: 0, -1)',
      },
    },
    async ({ params }) => {
      key.require(params.key);
      const id = serverId(params.id);
      const title = await failingAs(failed, () => uptime.queueServer(id));
      return { success: true, message: `Uptime recalculation queued for server "${title}" (ID ${id})` };
    },
  );
  group.get(
    '/calculate/all/:key',
    {
      summary: 'Mark every server for uptime recalculation and queue the job',
      params: keyOnly,
      response: { schema: successSchema() },
      answers: KEYED_ANSWERS,
    },
    async ({ params }) => {
      key.require(params.key);
      const count = await failingAs(failed, () => uptime.queueAll());
      return { success: true, message: `Uptime recalculation queued for all ${count} servers` };
    },
  );
  group.get(
    '/calculate/:key',
    {
      summary: 'Queue uptime recalculation for the servers marked as needing it',
      params: keyOnly,
      response: { schema: successSchema() },
      answers: KEYED_ANSWERS,
    },
    async ({ params }) => {
      key.require(params.key);
      const count = await failingAs(failed, () => uptime.queueStale());
      return { success: true, message: `Uptime recalculation queued for ${count} servers marked as needing it` };
    },
  );
}
