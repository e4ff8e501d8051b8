import { ApiGroup, PluginContext } from '@switchboard/core';
import { failingAs, idAndKey, KEYED_ANSWERS, keyParam, positiveId, successSchema } from '../shared/api';
import { MonitorKey } from '../shared/key';
import { RETENTION_DAYS } from '../shared/plans';
import { Purge, PurgeService } from './service';

const retention = Object.entries(RETENTION_DAYS)
  .map(([plan, days]) => `${plan} ${days} d`)
  .join(', ');

const BUSY = 'A purge is already running';

export const purgeOutput = (p: Purge) =>
  p.busy
    ? 'Another purge is running; nothing deleted by this call'
    : `Deleted ${p.logs} log entries and ${p.results} check results of ${p.organizations} organizations (retention: ${retention})`;

/** purge-logs and purge-logs/organization/{id}. */
export function purgeRoutes(group: ApiGroup, ctx: PluginContext): void {
  const key = ctx.container.resolve(MonitorKey);
  const purger = ctx.container.resolve(PurgeService);
  const schema = successSchema({ output: { type: 'string' } }, ['output']);
  const failed = 'Failed to purge logs';
  group.get(
    '/purge-logs/organization/:id/:key',
    {
      summary: "Purge one organization's logs and check results beyond its plan's retention",
      params: idAndKey,
      response: { schema },
      answers: {
        ...KEYED_ANSWERS,
        400: 'the organization id is not a positive integer',
        404: 'Organization with ID <id> not found',
      },
    },
    async ({ params }) => {
      key.require(params.key);
      const id = positiveId(params.id, 'organization');
      const purged = await failingAs(failed, () => purger.purge(id));
      const message = purged.busy ? BUSY : `Logs of organization ${id} purged`;
      return { success: true, message, output: purgeOutput(purged) };
    },
  );
  group.get(
    '/purge-logs/:key',
    {
      summary: "Purge every organization's logs and check results beyond its plan's retention",
      params: { type: 'object', required: ['key'], properties: { key: keyParam } },
      response: { schema },
      answers: KEYED_ANSWERS,
    },
    async ({ params }) => {
      key.require(params.key);
      const purged = await failingAs(failed, () => purger.purge());
      return { success: true, message: purged.busy ? BUSY : 'Logs purged', output: purgeOutput(purged) };
    },
  );
}
