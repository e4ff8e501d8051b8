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
import { notificationCommands } from './notifications/commands';
import { uptimeRoutes } from './uptime/routes';
import { UPTIME_JOB, UptimeService } from './uptime/service';
import { purgeRoutes } from './purge/routes';
import { PurgeService } from './purge/service';
import { sslRoutes } from './ssl/routes';
import { monitorCommands } from './commands';
import { workerStatusRoutes } from './worker-status/routes';
import { WorkerStatusService } from './worker-status/service';
import { DEFAULT_SSL_OPTIONS, SSL_JOB, SSL_OPTIONS, SslOptions, SslService, sslOptionsSchema } from './ssl/service';

const pkg = require('../../package.json') as { version: string };

interface MonitorOptions {
  checks?: Partial<CheckOptions>;
  ssl?: Partial<SslOptions>;
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
  optionsSchema: {
    type: 'object',
    additionalProperties: false,
    properties: { checks: checkOptionsSchema, ssl: sslOptionsSchema },
  },
  register(ctx) {
    ctx.container.register(CHECK_OPTIONS, { useValue: { ...DEFAULT_CHECK_OPTIONS, ...ctx.options.checks } });
    ctx.container.register(SSL_OPTIONS, { useValue: { ...DEFAULT_SSL_OPTIONS, ...ctx.options.ssl } });
    ctx.container.register(SMS_SENDER, { useValue: smsSenderOf(ctx.config, ctx.logger) });
    // One per engine: the queue's processors use its HTTP agent, and stop() closes that same agent.
    ctx.container.registerSingleton(CheckWorker);
  },
  routes(api, ctx) {
    const group = monitorGroup(api);
    // Before check/{type}: check/heartbeats and check/ssl are routes of their own.
    heartbeatRoutes(group, ctx as PluginContext);
    sslRoutes(group, ctx as PluginContext);
    checkRoutes(group, ctx as PluginContext);
    uptimeRoutes(group, ctx as PluginContext);
    purgeRoutes(group, ctx as PluginContext);
    workerStatusRoutes(group, ctx as PluginContext);
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
    const ssl = ctx.container.resolve(SslService);
    // The rest of a check/ssl call, without a time budget.
    queues.get(SSL_JOB).process(1, async (job) => {
      // The call that handed it over may still hold the lock for a moment: tried again (the job's retries).
      if ((await ssl.check(job.data.after, Number.MAX_SAFE_INTEGER)).busy) throw new Error('an SSL check is running');
    });
  },
  recurring(ctx) {
    const dispatcher = ctx.container.resolve(CheckDispatcher);
    const alerts = ctx.container.resolve(AlertService);
    const heartbeats = ctx.container.resolve(HeartbeatService);
    const uptime = ctx.container.resolve(UptimeService);
    const purger = ctx.container.resolve(PurgeService);
    const ssl = ctx.container.resolve(SslService);
    const status = ctx.container.resolve(WorkerStatusService);
    return [
      recurring('servermonitor.check-premium', '0 * * * * *', () => dispatcher.dispatch('premium')),
      recurring('servermonitor.check-free', '0 */5 * * * *', () => dispatcher.dispatch('free')),
      recurring('servermonitor.check-heartbeats', '0 * * * * *', () => heartbeats.check()),
      recurring('servermonitor.check-ssl', '0 0 6 * * *', () => ssl.check()),
      recurring('servermonitor.calculate', '0 0 * * * *', () => uptime.queueStale()),
      recurring('servermonitor.purge-logs', '0 0 2 * * *', () => purger.purge()),
      recurring('servermonitor.sla-sample', '45 * * * * *', () => status.sample()),
      recurring('servermonitor.alert-requeue', '30 * * * * *', (now) => alerts.requeueStale(now)),
    ];
  },
  commands(program, context) {
    const ctx = context as () => Promise<PluginContext>;
    heartbeatCommands(program, ctx);
    monitorCommands(program, ctx);
    notificationCommands(program, ctx);
  },
  async stop(ctx) {
    await ctx.container.resolve(CheckWorker).checker.close();
  },
});
