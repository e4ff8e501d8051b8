import path from 'node:path';
import { AppError, definePlugin, JobQueues, PluginContext, RecurringTask } from '@switchboard/core';
import { monitorGroup } from './shared/api';
import { fallbackRoutes } from './shared/fallback-routes';
import { checkRoutes } from './checks/routes';
import { CheckDispatcher } from './checks/dispatcher';
import { CheckWorker } from './checks/check-worker';
import { CHECK_JOBS } from './checks/jobs';
import { CHECK_OPTIONS, CheckOptions, checkOptionsSchema, DEFAULT_CHECK_OPTIONS } from './checks/options';
import { AlertService } from './alerts/alert-service';
import { ALERT_JOB } from './alerts/jobs';
import { SMS_SENDER, smsSenderOf } from './alerts/sms';
import { TIERS } from './shared/plans';
import { heartbeatRoutes } from './heartbeats/routes';
import { HeartbeatService } from './heartbeats/service';
import { heartbeatCommands } from './heartbeats/commands';
import { uptimeRoutes } from './uptime/routes';
import { UPTIME_JOB, UptimeService } from './uptime/service';
import { purgeRoutes } from './purge/routes';
import { PurgeService } from './purge/service';

const pkg = require('../../package.json') as { version: string };

interface MonitorOptions {
  checks?: Partial<CheckOptions>;
}

/** A recurring call of the spec's table; "nothing to check" (402, 404) is no failure of the schedule. */
const recurring = (name: string, cron: string, run: (now: Date) => Promise<unknown>): RecurringTask => ({
  name,
  cron,
  run: async (now) => {
    try {
      await run(now);
    } catch (err) {
      if (!(err instanceof AppError && (err.status === 402 || err.status === 404))) throw err;
    }
  },
});

export default definePlugin<MonitorOptions>({
  id: 'server-monitor',
  version: pkg.version,
  dependsOn: ['users-projects'],
  migrationsDir: path.join(__dirname, '../migrations'),
  optionsSchema: { type: 'object', additionalProperties: false, properties: { checks: checkOptionsSchema } },
  register(ctx) {
    ctx.container.register(CHECK_OPTIONS, { useValue: { ...DEFAULT_CHECK_OPTIONS, ...ctx.options.checks } });
    ctx.container.register(SMS_SENDER, { useValue: smsSenderOf(ctx.config, ctx.logger) });
  },
  routes(api, ctx) {
    const group = monitorGroup(api);
    // Before check/{type}: check/heartbeats and check/ssl are routes of their own.
    heartbeatRoutes(group, ctx as PluginContext);
    checkRoutes(group, ctx as PluginContext);
    uptimeRoutes(group, ctx as PluginContext);
    purgeRoutes(group, ctx as PluginContext);
    fallbackRoutes(group, ctx as PluginContext);
  },
  jobs(queues: JobQueues, ctx) {
    const worker = ctx.container.resolve(CheckWorker);
    const { concurrency } = ctx.container.resolve<CheckOptions>(CHECK_OPTIONS);
    for (const tier of TIERS) queues.get(CHECK_JOBS[tier]).process(concurrency, (job) => worker.run(job.data.serverId));
    const alerts = ctx.container.resolve(AlertService);
    queues.get(ALERT_JOB).process(5, (job) => alerts.send(job.data.alertId));
    const uptime = ctx.container.resolve(UptimeService);
    queues.get(UPTIME_JOB).process(1, () => uptime.recalculate());
  },
  recurring(ctx) {
    const dispatcher = ctx.container.resolve(CheckDispatcher);
    const alerts = ctx.container.resolve(AlertService);
    const heartbeats = ctx.container.resolve(HeartbeatService);
    const uptime = ctx.container.resolve(UptimeService);
    const purger = ctx.container.resolve(PurgeService);
    return [
      recurring('servermonitor.check-premium', '0 * * * * *', () => dispatcher.dispatch('premium')),
      recurring('servermonitor.check-free', '0 */5 * * * *', () => dispatcher.dispatch('free')),
      recurring('servermonitor.check-heartbeats', '0 * * * * *', () => heartbeats.check()),
      recurring('servermonitor.calculate', '0 0 * * * *', () => uptime.queueStale()),
      recurring('servermonitor.purge-logs', '0 0 2 * * *', () => purger.purge()),
      recurring('servermonitor.alert-requeue', '30 * * * * *', (now) => alerts.requeueStale(now)),
    ];
  },
  commands(program, context) {
    const ctx = context as () => Promise<PluginContext>;
    heartbeatCommands(program, ctx);
  },
  async stop(ctx) {
    await ctx.container.resolve(CheckWorker).checker.close();
  },
});
