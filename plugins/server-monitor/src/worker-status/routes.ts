import { ApiGroup, PluginContext } from '@switchboard/core';
import { failingAs, KEYED_ANSWERS, keyParam, MONITOR_PREFIX } from '../shared/api';
import { MonitorKey } from '../shared/key';
import { renderDashboard } from './dashboard';
import { DASHBOARD_CSS } from './dashboard-style';
import { OnCallReader } from './on-call';
import { WorkerStatusService } from './service';

const CHART_HOURS = 6;
const compliance = {
  type: 'object',
  required: ['percentage', 'checked', 'total'],
  properties: { percentage: { type: 'number' }, checked: { type: 'integer' }, total: { type: 'integer' } },
} as const;
const tiers = (schema: object) =>
  ({ type: 'object', required: ['premium', 'free'], properties: { premium: schema, free: schema } }) as const;

const keyOnly = { type: 'object', required: ['key'], properties: { key: keyParam } } as const;

/** worker-status/{api_key} and the dashboard its `dashboard_url` names. */
export function workerStatusRoutes(group: ApiGroup, ctx: PluginContext): void {
  const key = ctx.container.resolve(MonitorKey);
  const service = ctx.container.resolve(WorkerStatusService);
  const onCall = ctx.container.resolve(OnCallReader);
  group.get(
    '/worker-status/:key',
    {
      summary: 'Worker performance and SLA compliance',
      params: keyOnly,
      response: {
        schema: {
          type: 'object',
          required: [
            'success',
            'status',
            'timestamp',
            'sla_compliance',
            'queue_status',
            'recent_breaches',
            'dashboard_url',
          ],
          properties: {
            success: { type: 'boolean' },
            status: { type: 'string', enum: ['healthy', 'warning', 'critical'] },
            timestamp: { type: 'string', format: 'date-time' },
            sla_compliance: tiers(compliance),
            queue_status: tiers({ type: 'integer' }),
            recent_breaches: { type: 'integer', description: 'Minutes of the last hour below 99 % on a plan' },
            dashboard_url: { type: 'string' },
          },
        },
      },
      answers: KEYED_ANSWERS,
    },
    async ({ params }) => {
      key.require(params.key);
      const status = await failingAs('Failed to read the worker status', () => service.status());
      const base = ctx.config.publicUrl.replace(/\/$/, '');
      return {
        success: true,
        ...status,
        dashboard_url: `${base}${MONITOR_PREFIX}/dashboard/${encodeURIComponent(params.key)}`,
      };
    },
  );
  group.get(
    '/dashboard/:key',
    {
      summary:
        'The on-call dashboard (HTML): servers down (longest first), alerts nobody heard, missing heartbeats, certificates ending, servers by plan, worker compliance and its chart',
      params: keyOnly,
      response: { description: 'An HTML page', contentType: 'text/html', schema: { type: 'string' } },
      answers: KEYED_ANSWERS,
    },
    async ({ params, ctx: http }) => {
      key.require(params.key);
      const [status, samples, now] = await Promise.all([
        service.status({ unknownQueues: true }),
        service.samples(CHART_HOURS),
        onCall.read(),
      ]);
      http.type = 'text/html; charset=utf-8';
      http.set('Cache-Control', 'no-store');
      const styleUrl = `${MONITOR_PREFIX}/dashboard-style/${encodeURIComponent(params.key)}`;
      return renderDashboard(status, samples, CHART_HOURS, now, styleUrl);
    },
  );
  group.get(
    '/dashboard-style/:key',
    {
      summary: "The dashboard's stylesheet (CSS)",
      params: keyOnly,
      response: { description: 'A stylesheet', contentType: 'text/css', schema: { type: 'string' } },
      answers: KEYED_ANSWERS,
    },
    async ({ params, ctx: http }) => {
      key.require(params.key);
      http.type = 'text/css; charset=utf-8';
      http.set('Cache-Control', 'private, max-age=300');
      return DASHBOARD_CSS;
    },
  );
}
