import { ApiGroup, PluginContext } from '@switchboard/core';
import { envelopes, okSchema } from '../shared/envelope';
import { Period, periodQuery } from './periods';
import { DashboardAnalytics, dashboardSchema } from './dashboard';
import { GrowthAnalytics, growthSchema } from './growth';
import { PerformanceAnalytics, performanceSchema } from './performance';
import { EngagementAnalytics, engagementSchema } from './engagement';

/** Account-wide analytics, read from the daily figures kept as changes happen (docs/decisions.md, Analytics). */
export function analyticsRoutes(group: ApiGroup, ctx: PluginContext): void {
  const envelope = envelopes(ctx.config.version, ctx.config.publicUrl);
  const dashboard = ctx.container.resolve(DashboardAnalytics);
  const growth = ctx.container.resolve(GrowthAnalytics);
  const performance = ctx.container.resolve(PerformanceAnalytics);
  const engagement = ctx.container.resolve(EngagementAnalytics);
  const byPeriod = [
    {
      path: '/analytics/dashboard',
      summary: 'Subscribers, mails, rates and best messages of a period beside the previous period',
      schema: dashboardSchema,
      run: (org: number, period: Period) => dashboard.of(org, period),
    },
    {
      path: '/analytics/growth',
      summary: 'New subscribers and unsubscribes of a period (default 30d) and the one before, a daily chart',
      schema: growthSchema,
      run: (org: number, period: Period) => growth.of(org, period),
    },
    {
      path: '/analytics/performance',
      summary: 'Mail figures of a period (default 30d) day by day, and the messages ranked by open rate',
      schema: performanceSchema,
      run: (org: number, period: Period) => performance.of(org, period),
    },
  ];
  for (const route of byPeriod)
    group.get(
      route.path,
      {
        permission: 'analytics:read',
        summary: route.summary,
        query: periodQuery,
        response: { schema: okSchema(route.schema) },
      },
      async ({ auth, query }) => envelope.ok(await route.run(auth.organizationId, query.period as Period)),
    );
  group.get(
    '/analytics/engagement',
    {
      permission: 'analytics:read',
      summary: 'Active and never-engaged subscribers, first opens by hour of day and day of week',
      response: { schema: okSchema(engagementSchema) },
    },
    async ({ auth }) => envelope.ok(await engagement.of(auth.organizationId)),
  );
}
