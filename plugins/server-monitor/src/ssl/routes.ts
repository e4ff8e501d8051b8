import { ApiGroup, PluginContext } from '@switchboard/core';
import { failingAs, KEYED_ANSWERS, keyParam, successSchema } from '../shared/api';
import { MonitorKey } from '../shared/key';
import { SslService } from './service';

/** GET /check/ssl/{api_key} (registered before check/{type}). */
export function sslRoutes(group: ApiGroup, ctx: PluginContext): void {
  const key = ctx.container.resolve(MonitorKey);
  const ssl = ctx.container.resolve(SslService);
  group.get(
    '/check/ssl/:key',
    {
      summary: 'Read the certificate of every https server and alert on expiry (counts of this run)',
      params: { type: 'object', required: ['key'], properties: { key: keyParam } },
      response: {
        schema: successSchema(
          { checked: { type: 'integer' }, expiring_soon: { type: 'integer' }, expired: { type: 'integer' } },
          ['checked', 'expiring_soon', 'expired'],
        ),
      },
      answers: KEYED_ANSWERS,
    },
    async ({ params }) => {
      key.require(params.key);
      const run = await failingAs('Failed to check SSL certificates', () => ssl.check());
      const message = run.busy
        ? 'An SSL check is already running'
        : run.handedOver
          ? 'SSL certificates checked for this run; the rest are being checked by a worker'
          : 'SSL certificates checked';
      return { success: true, message, checked: run.checked, expiring_soon: run.expiringSoon, expired: run.expired };
    },
  );
}
