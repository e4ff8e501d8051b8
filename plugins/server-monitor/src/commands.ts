import fs from 'node:fs';
import type { Command } from 'commander';
import { CliError, idOf, JobQueue, JobQueues, loadOnFirstUse, printResult, SERVICES, toInt } from '@switchboard/core';
import type { PluginContext } from '@switchboard/core';
import {
  CHECK_JOBS,
  CHECK_OPTIONS,
  CheckDispatcher,
  CheckOptions,
  CheckWorker,
  dispatchMessage,
  dispatchOutput,
  processChecks,
} from './checks';
import { HeartbeatService } from './heartbeats';
import { SslService } from './ssl';
import { purgeOutput, PurgeService } from './purge';
import { CapacityService } from './worker-status';
import { AlertService } from './alerts';
import { ServerImporter } from './import';
import { CheckType, TIERS } from './shared/plans';
import { asCliError } from './shared/cli';
import { MonitorKey } from './shared/key';

type Context = () => Promise<PluginContext>;

const cliProgress = loadOnFirstUse(() => require('cli-progress') as typeof import('cli-progress'));

const organizationOption = (value: string | undefined): number | undefined => {
  if (value === undefined) return undefined;
  const id = idOf(value);
  if (id === null) throw new CliError('--organization must be an organization id');
  return id;
};

/** Until the queues hold nothing waiting, delayed or running. */
async function drained(queues: JobQueue[]): Promise<void> {
  for (;;) {
    const counts = await Promise.all(queues.map((q) => q.counts()));
    if (counts.every((c) => c.waiting + c.active + c.delayed === 0)) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Without Redis the queue lives in this process: the command works off what it queued before it
 * ends. With Redis, the workers do.
 */
async function runQueuedChecks(ctx: PluginContext): Promise<void> {
  if (ctx.config.redisUrl) return;
  const queues = ctx.container.resolve<JobQueues>(SERVICES.Queues);
  const worker = ctx.container.resolve(CheckWorker);
  const { concurrency } = ctx.container.resolve<CheckOptions>(CHECK_OPTIONS);
  processChecks(queues, worker, concurrency);
  await drained(TIERS.map((tier) => queues.get(CHECK_JOBS[tier])));
  await worker.checker.close();
}

/** The console commands of the spec: the same operations as its endpoints. */
export function monitorCommands(program: Command, context: Context): void {
  program
    .command('servermonitor:checkserverstatus')
    .description('queue a check of every server (both plans, or --premium / --free)')
    .option('--premium', 'premium-plan servers only')
    .option('--free', 'free-plan servers only')
    .option('--json', 'print one JSON object')
    .action(async (o: { premium?: boolean; free?: boolean; json?: boolean }) => {
      const type: CheckType = o.premium && !o.free ? 'premium' : o.free && !o.premium ? 'free' : 'all';
      const ctx = await context();
      const dispatch = await ctx.container.resolve(CheckDispatcher).dispatch(type).catch(asCliError);
      await runQueuedChecks(ctx);
      const message = dispatchMessage(type, dispatch);
      const output = dispatchOutput(dispatch);
      printResult(o.json, { success: true, message, output }, `${message}\n${output}`);
    });

  program
    .command('servermonitor:checkheartbeats')
    .description('detect missing heartbeat pings and alert')
    .option('--json', 'print one JSON object')
    .action(async (o: { json?: boolean }) => {
      const ctx = await context();
      const run = await ctx.container.resolve(HeartbeatService).check();
      const out = { success: true, missing: run.missing, healthy: run.healthy, newly_missing: run.newlyMissing };
      printResult(o.json, out, `${run.missing} missing (${run.newlyMissing} newly alerted), ${run.healthy} healthy`);
    });

  program
    .command('servermonitor:checksslcertificates')
    .description('read the certificate of every https server and alert on expiry')
    .option('--json', 'print one JSON object')
    .action(async (o: { json?: boolean }) => {
      const ctx = await context();
      const run = await ctx.container.resolve(SslService).check(0, Number.MAX_SAFE_INTEGER);
      if (run.busy) throw new CliError('An SSL check is already running');
      const out = { success: true, checked: run.checked, expiring_soon: run.expiringSoon, expired: run.expired };
      printResult(o.json, out, `${run.checked} checked, ${run.expiringSoon} expiring soon, ${run.expired} expired`);
    });

  program
    .command('servermonitor:purge-logs')
    .description("delete logs and check results older than each organization's plan retention")
    .option('--organization <id>', 'one organization only')
    .option('--json', 'print one JSON object')
    .action(async (o: { organization?: string; json?: boolean }) => {
      const organization = organizationOption(o.organization);
      const ctx = await context();
      const purged = await ctx.container.resolve(PurgeService).purge(organization).catch(asCliError);
      const output = purgeOutput(purged);
      printResult(o.json, { success: !purged.busy, output, ...purged }, output);
    });

  program
    .command('servermonitor:check-capacity')
    .description('whether the measured check rate meets both SLAs, and how many workers are needed')
    .option('--json', 'print one JSON object')
    .action(async (o: { json?: boolean }) => {
      const ctx = await context();
      const c = await ctx.container.resolve(CapacityService).measure();
      const human = [
        `servers: ${c.servers.premium} premium, ${c.servers.free} free`,
        `needed: ${c.required_checks_per_second} checks/s; measured (last 10 min): ${c.measured_checks_per_second} checks/s`,
        `average check: ${c.average_response_ms ?? 'no checks yet'} ms; one worker: ${c.checks_per_second_per_worker ?? '?'} checks/s`,
        `workers needed: ${c.workers_needed ?? 'unknown until checks ran'}; SLAs ${c.meets_sla ? 'met' : 'NOT met'}`,
        ...(!c.meets_sla && c.servers_added_in_window
          ? [
              `(${c.servers_added_in_window} servers were added in the last 10 minutes: their checks are not all measured yet; run this again in 10 minutes)`,
            ]
          : []),
      ].join('\n');
      printResult(o.json, c, human);
    });

  program
    .command('servermonitor:import')
    .description('import servers from a CSV file (title, endpoint, organization_name[, status, notes])')
    .argument('<file>', 'the CSV file')
    .option('--dry-run', 'report only, create nothing')
    .option('--organization <id>', 'put every server in this organization')
    .option('--json', 'print one JSON object')
    .action(async (file: string, o: { dryRun?: boolean; organization?: string; json?: boolean }) => {
      const organizationId = organizationOption(o.organization);
      if (!fs.existsSync(file)) throw new CliError(`No such file: ${file}`);
      const ctx = await context();
      const bar = process.stderr.isTTY && !o.json ? new (cliProgress().SingleBar)({ stream: process.stderr }) : null;
      bar?.start(fs.statSync(file).size, 0);
      const result = await ctx.container
        .resolve(ServerImporter)
        .import(file, { dryRun: o.dryRun, organizationId, onProgress: (bytes) => bar?.update(bytes) })
        .catch(asCliError)
        .finally(() => bar?.stop());
      const human = [
        `${o.dryRun ? 'Would import' : 'Imported'} ${result.imported} servers, ${result.organizations_created} organizations ${o.dryRun ? 'to create' : 'created'}, ${result.errors} errors`,
        ...result.error_rows.map((e) => `  line ${e.line}: ${e.message}`),
      ].join('\n');
      printResult(o.json, result, human);
    });

  program
    .command('servermonitor:testalerts')
    .description("send a test alert to every enabled channel of each active organization's administrators")
    .option('--json', 'print one JSON object')
    .action(async (o: { json?: boolean }) => {
      const ctx = await context();
      const alerts = ctx.container.resolve(AlertService);
      const knex = ctx.container.resolve<import('knex').Knex>(SERVICES.Knex);
      const organizations = await knex('organizations')
        .where({ subscription_status: 'active' })
        .orderBy('id')
        .pluck('id');
      let sent = 0;
      let failed = 0;
      for (const id of organizations) {
        const ids = await alerts.raise(knex, toInt(id), {
          kind: 'test',
          serverId: null,
          subject: 'Test alert from Switchboard server monitor',
          text: 'This is a test: alerts reach you on this channel.',
        });
        // Sent now, not queued: the command reports what happened.
        for (const alertId of ids) await alerts.sendOnce(alertId).then((ok) => (ok ? sent++ : failed++));
      }
      const out = { success: failed === 0, organizations: organizations.length, sent, failed };
      printResult(o.json, out, `${sent} test alerts sent, ${failed} failed, to ${organizations.length} organizations`);
      // Its result said so, and a script checks the exit code: one alert not delivered is a failure.
      if (failed) process.exitCode = 1;
    });

  program
    .command('servermonitor:key')
    .description('print the key the server-monitor routes take (SERVER_MONITOR_API_KEY, or the one generated locally)')
    .option('--json', 'print one JSON object')
    .action(async (o: { json?: boolean }) => {
      const key = (await context()).container.resolve(MonitorKey);
      if (!key.value)
        throw new CliError('SERVER_MONITOR_API_KEY is unset: every server-monitor route answers 403 Invalid API key');
      const source = key.kept ? { source: 'file', file: key.kept.file } : { source: 'env' };
      printResult(o.json, { key: key.value, ...source }, key.value);
    });
}
