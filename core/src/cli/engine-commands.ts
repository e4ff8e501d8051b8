import type { Command } from 'commander';
import type { Engine } from '../engine/engine';
import type { AppConfig } from '../config/types';
import { listenUrl } from '../config/load-config';
import { printResult } from './output';
import { recordServedUrl, servedUrlRecorded } from '../config/served-url';
import { runUntilSignal } from './run-until-signal';
import { metricsClosedReason } from '../http/metrics-access';
import { boundHeapGrowth } from './heap-growth';
import { assertVersion } from '../db/migrations/namespace';

/** `--to` checked before the engine opens: a typo neither opens nor creates a database. */
const checkedTo = (to: string | undefined) => {
  if (to !== undefined) assertVersion(to, '--to');
  return to;
};

export type WithEngine = <T>(fn: (engine: Engine) => Promise<T>, keepOpen?: boolean) => Promise<T>;

export function registerProcessCommands(program: Command, withEngine: WithEngine, config: AppConfig): void {
  program
    .command('serve')
    .description('serve the HTTP API (with queue workers and the scheduler unless disabled)')
    .option('--no-worker', 'do not run queue workers in this process')
    .option('--no-scheduler', 'do not run the recurring scheduler in this process')
    .option('--no-migrate', 'do not apply pending migrations before serving')
    .action((opts: { worker: boolean; scheduler: boolean; migrate: boolean }) =>
      withEngine(async (engine) => {
        boundHeapGrowth();
        await engine.start({ migrate: opts.migrate, workers: opts.worker, scheduler: opts.scheduler, http: true });
        const stopped = runUntilSignal(engine);
        const { host, port, publicUrl } = engine.config;
        recordServedUrl(engine.config);
        engine.logger.info({ host, port, plugins: engine.plugins.map((p) => p.plugin.id) }, 'listening');
        const metricsClosed = metricsClosedReason(engine.config);
        if (metricsClosed) engine.logger.warn(`${metricsClosed}: /metrics answers 403`);
        const listening = engine.httpServer?.address();
        const localUrl = listening && typeof listening === 'object' ? listenUrl(host, listening.port) : publicUrl;
        process.stdout.write(
          startBanner(
            publicUrl,
            localUrl,
            engine.plugins.map((p) => p.plugin.id),
            metricsClosed,
          ),
        );
        await stopped;
      }, true),
    );

  program
    .command('worker')
    .description('run queue workers only (scale these out on Redis)')
    .action(() =>
      withRedis(
        config,
        'worker',
        withEngine,
      )(async (engine) => {
        boundHeapGrowth();
        await engine.start({ workers: true });
        const stopped = runUntilSignal(engine);
        engine.logger.info({ public_url: engine.config.publicUrl }, 'worker started');
        // Links in mail name this URL for the process's life: say so when it is only a guess.
        if (!engine.config.publicUrlGiven && !servedUrlRecorded(engine.config))
          engine.logger.warn(
            { public_url: engine.config.publicUrl },
            'PUBLIC_URL is not set and no serve has recorded its URL in DATA_DIR: links in mail name this HOST:PORT. Set PUBLIC_URL, or start the worker after serve',
          );
        await stopped;
      }, true),
    );

  program
    .command('scheduler')
    .description('run the recurring tick only (one active at a time, guarded by a lock)')
    .action(() =>
      withRedis(
        config,
        'scheduler',
        withEngine,
      )(async (engine) => {
        await engine.start({ scheduler: true });
        const stopped = runUntilSignal(engine);
        engine.logger.info('scheduler started');
        await stopped;
      }, true),
    );
}

/**
 * A worker or scheduler process shares its jobs with the others through Redis: without it the jobs it
 * would take, or queue, stay in one process's memory, so it would run and do nothing. It stops and says
 * so, before opening anything.
 */
function withRedis(config: AppConfig, command: string, withEngine: WithEngine): WithEngine {
  if (config.redisUrl) return withEngine;
  throw new Error(
    `switchboard ${command} shares jobs with the other processes through Redis: set REDIS_URL (the same as serve's). Without Redis, serve runs the workers and the scheduler itself`,
  );
}

/** Where this process listens comes first: several API processes behind one PUBLIC_URL each say their own. */
function startBanner(url: string, localUrl: string, plugins: string[], metricsClosed: string | null): string {
  const served = localUrl === url ? url : `${localUrl} (public URL ${url})`;
  return [
    `Switchboard is serving ${plugins.join(', ') || 'no plugins'} on ${served}`,
    `  API docs:     ${url}/api/docs`,
    `  Metrics:      ${metricsClosed ? `not served (${metricsClosed})` : `${url}/metrics`}`,
    '  First token:  npx switchboard org:create --name "My company"',
    '                npx switchboard token:create --org <id> --name admin --permissions "*"',
    '',
  ].join('\n');
}

export function registerMigrationCommands(program: Command, withEngine: WithEngine): void {
  program
    .command('migrate')
    .description('apply pending migrations (core first, then plugins by dependency)')
    .option('--plugin <id>', 'only this plugin (or core)')
    .option('--to <x.y>', 'stop after this version')
    .option('--json', 'print one JSON object')
    .action((opts: { plugin?: string; to?: string; json?: boolean }) => {
      const to = checkedTo(opts.to);
      return withEngine(async (engine) => {
        const result = await engine.migrator().latest({ plugin: opts.plugin, to });
        const lines = result.map((r) => `${r.plugin}: ${r.applied.length ? r.applied.join(', ') : 'up to date'}`);
        printResult(opts.json, { migrated: result }, lines.join('\n'));
      });
    });

  program
    .command('migrate:status')
    .description('applied and pending migrations per plugin')
    .option('--json', 'print one JSON object')
    .action((opts: { json?: boolean }) =>
      withEngine(async (engine) => {
        const status = await engine.migrator().status();
        const lines = status.map(
          (s) =>
            `${s.plugin} (release ${s.version}, at ${s.current ?? 'nothing'}): ${s.applied.length} applied, ${s.pending.length} pending${s.pending.length ? ` (${s.pending.join(', ')})` : ''}` +
            (s.unknown.length
              ? `; NEWER than this release: ${s.unknown.join(', ')} (migrated by a newer release)`
              : ''),
        );
        printResult(opts.json, { status }, lines.join('\n'));
      }),
    );

  program
    .command('migrate:unlock')
    .description('clear the migration lock left by a runner that was killed mid-migration')
    .option('--plugin <id>', 'only this plugin (or core)')
    .option('--json', 'print one JSON object')
    .action((opts: { plugin?: string; json?: boolean }) =>
      withEngine(async (engine) => {
        const unlocked = await engine.migrator().unlock(opts.plugin);
        printResult(opts.json, { unlocked }, `Unlocked: ${unlocked.join(', ')}`);
      }),
    );

  program
    .command('migrate:rollback')
    .description(
      "revert the last batch (without --plugin: of the last migrate run's plugins), or every migration above --to",
    )
    .option('--plugin <id>', 'only this plugin (or core)')
    .option('--to <x.y>', 'revert every migration of a later version')
    .option('--json', 'print one JSON object')
    .action((opts: { plugin?: string; to?: string; json?: boolean }) => {
      const to = checkedTo(opts.to);
      return withEngine(async (engine) => {
        const result = await engine.migrator().rollback({ plugin: opts.plugin, to });
        const lines = result.map(
          (r) => `${r.plugin}: ${r.reverted.length ? `reverted ${r.reverted.join(', ')}` : 'nothing to revert'}`,
        );
        // No namespace with a batch to revert (a database never migrated): said, not an empty line.
        printResult(opts.json, { rolledBack: result }, lines.join('\n') || 'nothing to revert');
      });
    });
}
