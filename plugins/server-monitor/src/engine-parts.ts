// What the engine calls of the plugin: index.ts loads this file when an engine opens, not for the CLI's command list.
import { AppError, JobQueues, PluginApi, PluginContext, RecurringTask } from '@switchboard/core';
import { MONITOR_PREFIX, monitorGroup } from './shared/api';
import { serverRoutes } from './servers';
import { fallbackRoutes } from './shared/fallback-routes';
import { MonitorKey } from './shared/key';
import { MONITOR_ADDRESSES, MonitorAddresses } from './shared/addresses';
import {
  CHECK_OPTIONS,
  CheckDispatcher,
  CheckOptions,
  checkRoutes,
  CheckWorker,
  DEFAULT_CHECK_OPTIONS,
  processChecks,
} from './checks';
import { ALERT_JOB, AlertService, SMS_SENDER, smsSenderOf } from './alerts';
import { heartbeatRoutes, HeartbeatService } from './heartbeats';
import { UPTIME_JOB, uptimeRoutes, UptimeService } from './uptime';
import { purgeRoutes, PurgeService } from './purge';
import { workerStatusRoutes, WorkerStatusService } from './worker-status';
import { DEFAULT_SSL_OPTIONS, SSL_JOB, SSL_OPTIONS, SslOptions, sslRoutes, SslService } from './ssl';

export interface MonitorOptions {
  checks?: Partial<CheckOptions>;
  ssl?: Partial<SslOptions>;
}

/** A recurring call of the spec's table; "nothing to check" (402, 404) is no failure of the schedule. */
const recurringCall = (name: string, cron: string, run: (now: Date) => Promise<unknown>): RecurringTask => ({
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

export function register(ctx: PluginContext<MonitorOptions>): void {
  // The one place the key is read: the routes, the dashboard and the commands resolve this value.
  ctx.container.register(MonitorKey, { useValue: MonitorKey.resolve(ctx.config) });
  ctx.container.register(CHECK_OPTIONS, { useValue: { ...DEFAULT_CHECK_OPTIONS, ...ctx.options.checks } });
  ctx.container.register(SSL_OPTIONS, { useValue: { ...DEFAULT_SSL_OPTIONS, ...ctx.options.ssl } });
  ctx.container.register(SMS_SENDER, { useValue: smsSenderOf(ctx.config, ctx.logger) });
  // Read here, so a MONITOR_ALLOWED_RANGES entry that is no range stops start-up.
  ctx.container.register(MONITOR_ADDRESSES, { useValue: MonitorAddresses.fromEnv(ctx.config.env) });
  // One per engine: the queue's processors use its HTTP agent, and stop() closes that same agent.
  ctx.container.registerSingleton(CheckWorker);
}

export function routes(api: PluginApi, ctx: PluginContext): void {
  // By API token, before the spec's keyed routes: their catch-all would take these paths too.
  serverRoutes(api.group({ prefix: `${MONITOR_PREFIX}/servers`, tag: 'server-monitor: servers', auth: 'token' }), ctx);
  const group = monitorGroup(api);
  // Before check/{type}: check/heartbeats and check/ssl are routes of their own.
  heartbeatRoutes(group, ctx);
  sslRoutes(group, ctx);
  checkRoutes(group, ctx);
  uptimeRoutes(group, ctx);
  purgeRoutes(group, ctx);
  workerStatusRoutes(group, ctx);
  fallbackRoutes(group, ctx);
}

export function jobs(queues: JobQueues, ctx: PluginContext): void {
  const { concurrency } = ctx.container.resolve<CheckOptions>(CHECK_OPTIONS);
  processChecks(queues, ctx.container.resolve(CheckWorker), concurrency);
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
}

/** The scheduler's rounds: a call between them does not cancel one (CheckDispatcher). */
const SCHEDULED = { scheduled: true };

export function recurring(ctx: PluginContext): RecurringTask[] {
  const dispatcher = ctx.container.resolve(CheckDispatcher);
  const alerts = ctx.container.resolve(AlertService);
  const heartbeats = ctx.container.resolve(HeartbeatService);
  const uptime = ctx.container.resolve(UptimeService);
  const purger = ctx.container.resolve(PurgeService);
  const ssl = ctx.container.resolve(SslService);
  const status = ctx.container.resolve(WorkerStatusService);
  return [
    recurringCall('servermonitor.check-premium', '0 * * * * *', () => dispatcher.dispatch('premium', SCHEDULED)),
    recurringCall('servermonitor.check-free', '0 */5 * * * *', () => dispatcher.dispatch('free', SCHEDULED)),
    recurringCall('servermonitor.check-heartbeats', '0 * * * * *', () => heartbeats.check()),
    recurringCall('servermonitor.check-ssl', '0 0 6 * * *', () => ssl.check()),
    recurringCall('servermonitor.calculate', '0 0 * * * *', () => uptime.queueStale()),
    recurringCall('servermonitor.purge-logs', '0 0 2 * * *', () => purger.purge()),
    recurringCall('servermonitor.sla-sample', '45 * * * * *', () => status.sample()),
    recurringCall('servermonitor.alert-requeue', '30 * * * * *', (now) => alerts.requeueStale(now)),
    recurringCall('servermonitor.alert-unheard', '40 * * * * *', () => alerts.tellUnheard()),
  ];
}

/** Says at start-up where a generated key is, or that no route can be called without one. */
export async function start(ctx: PluginContext): Promise<void> {
  ctx.container.resolve(MonitorKey).announce(ctx.logger);
}

export async function stop(ctx: PluginContext): Promise<void> {
  await ctx.container.resolve(CheckWorker).checker.close();
}
