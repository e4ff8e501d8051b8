import http from 'node:http';
import path from 'node:path';
import type { DependencyContainer } from 'tsyringe';
import type { Knex } from 'knex';
import type Koa from 'koa';
import type { Logger } from 'pino';
import type { RedisClientType } from 'redis';
import type { AppConfig } from '../config/types';
import { SERVICES } from '../container/service-keys';
import { loadPlugins, LoadedPlugin } from '../plugin/loader';
import { checkPluginEnv } from '../plugin/env';
import type { PluginContext } from '../plugin/types';
import { ApiRegistry } from '../http/api-registry';
import { ShutdownGate } from '../http/shutdown-gate';
import type { Metrics } from '../http/metrics';
import { ApiTokenService } from '../auth/api-tokens';
import { knownResources } from '../auth/permissions';
import { Migrator, SchemaGate } from '../db/migrations';
import type { MigrationNamespace } from '../db/migrations';
import { Scheduler } from '../scheduler';
import type { JobQueues } from '../queue/types';
import { gatedQueues } from '../queue/gated-queues';
import type { Locks } from '../locks/types';
import { DatabaseLocks } from '../locks/database-locks';
import { RepeatedWarning } from '../repeated-warning';
import type { Clock } from '../clock';
import type { SecretBox } from '../secrets/secret-box';
import { closeSharedServices, createRootContainer, SharedServiceOverrides } from './shared-services';
import { ProvidedServices } from './provided-services';
import { loadOnFirstUse } from '../load-on-first-use';
import { withinDeadline } from '../deadline';
import { watchStalledQueries } from '../db/stalled-queries';

// Koa, its middleware and the rate limiters load when the process serves HTTP.
const httpApp = loadOnFirstUse(() => require('../http/build-app') as typeof import('../http/build-app'));
const rateLimiting = loadOnFirstUse(() => require('../http/rate-limits') as typeof import('../http/rate-limits'));

export const CORE_MIGRATIONS: MigrationNamespace = {
  id: 'core',
  version: '1.2',
  directory: path.join(__dirname, '../../migrations'),
};

export interface EngineOptions extends SharedServiceOverrides {
  /** Loads a plugin package, undefined when it is not installed; tests pass their own. */
  resolvePlugin?: (pkg: string) => unknown;
  /** Check every success body against its route's response schema (tests). */
  checkResponses?: boolean;
}

/** What one process runs; `start()` brings them up in a safe order. */
export interface EngineParts {
  /** Apply pending migrations first. */
  migrate?: boolean;
  /** Listen for HTTP requests. */
  http?: boolean;
  /** Run the plugins' queue processors. */
  workers?: boolean;
  /** Run the recurring tick (one active across processes). */
  scheduler?: boolean;
}

/** How long /ready waits for Redis's answer before saying it does not answer. */
const READY_PING_MS = 2_000;
/** The least time a shutdown gives the scheduler's running tasks and its leader lock's release. */
const SCHEDULER_STOP_MIN_MS = 2_000;

/** One running Switchboard: shared services, the enabled plugins, and what they registered. */
export class Engine {
  private app?: Koa;
  private server?: http.Server;
  private readonly shutdownGate = new ShutdownGate();
  private scheduler?: Scheduler;
  private workersStarted = false;
  private pluginsStarted = false;
  private closing?: Promise<void>;

  private constructor(
    readonly config: AppConfig,
    readonly container: DependencyContainer,
    readonly plugins: LoadedPlugin[],
    readonly contexts: Map<string, PluginContext>,
    readonly registry: ApiRegistry,
  ) {}

  static async create(config: AppConfig, options: EngineOptions = {}): Promise<Engine> {
    const plugins = loadPlugins(config.plugins, options.resolvePlugin);
    for (const { plugin } of plugins) checkPluginEnv(plugin, config.env);
    const root = await createRootContainer(config, options);
    const resources = knownResources(plugins.map((l) => l.plugin));
    root.register(SERVICES.Resources, { useValue: resources });
    const contexts = new Map<string, PluginContext>();
    const registry = new ApiRegistry({
      policies: Object.fromEntries(
        plugins.map((l) => [l.plugin.id, l.config.rateLimits ?? l.plugin.rateLimits ?? null]),
      ),
      resources,
      checkResponses: options.checkResponses,
    });
    const engine = new Engine(config, root, plugins, contexts, registry);
    try {
      const logger = root.resolve<Logger>(SERVICES.Logger);
      root.register(SERVICES.SchemaGate, {
        useValue: new SchemaGate(() => engine.migrator().missing(), logger.child({ component: 'schema' })),
      });
      const provided = new ProvidedServices();
      for (const { plugin, options: pluginOptions } of plugins) {
        const ctx: PluginContext = {
          id: plugin.id,
          options: pluginOptions,
          config,
          container: root.createChildContainer(),
          logger: logger.child({ plugin: plugin.id }),
        };
        contexts.set(plugin.id, ctx);
        // The loader ordered providers first and checked that each needed service has one.
        for (const provision of plugin.provides ?? []) provided.add(provision, ctx);
        for (const token of [...(plugin.provides ?? []).map((p) => p.token), ...(plugin.needs ?? [])])
          provided.injectInto(ctx.container, token);
        await plugin.register?.(ctx);
        plugin.routes?.(registry.forPlugin(plugin.id), ctx);
      }
    } catch (err) {
      await closeSharedServices(root, 0);
      throw err;
    }
    return engine;
  }

  /** The listening server once `start({ http: true })` or `listen()` resolved. */
  get httpServer(): http.Server | undefined {
    return this.server;
  }

  get logger(): Logger {
    return this.container.resolve<Logger>(SERVICES.Logger);
  }

  get knex(): Knex {
    return this.container.resolve<Knex>(SERVICES.Knex);
  }

  get schemaGate(): SchemaGate {
    return this.container.resolve<SchemaGate>(SERVICES.SchemaGate);
  }

  migrationNamespaces(): MigrationNamespace[] {
    return [
      CORE_MIGRATIONS,
      ...this.plugins
        .filter((l) => l.plugin.migrationsDir)
        .map((l) => ({ id: l.plugin.id, version: l.plugin.version, directory: l.plugin.migrationsDir! })),
    ];
  }

  migrator(): Migrator {
    return new Migrator(this.knex, this.migrationNamespaces(), {
      secrets: () => this.container.resolve<SecretBox>(SERVICES.SecretBox),
      log: this.logger,
    });
  }

  http(): Koa {
    if (this.app) return this.app;
    const { RateLimits } = rateLimiting();
    this.app = httpApp().buildHttpApp({
      config: this.config,
      logger: this.logger,
      registry: this.registry,
      tokens: this.container.resolve(ApiTokenService),
      rateLimits: new RateLimits(this.config, this.container.resolve<RedisClientType | null>(SERVICES.Redis)),
      metrics: this.container.resolve<Metrics>(SERVICES.Metrics),
      ready: () => this.readiness(),
      shutdown: this.shutdownGate,
    });
    return this.app;
  }

  /**
   * Each dependency asked at once, each within READY_PING_MS: node-redis holds a command while
   * disconnected, forever, and a database that stalls (a network that drops packets) left /ready
   * unanswered for minutes; a load balancer's probe must read 503 instead.
   */
  async readiness(): Promise<Record<string, string>> {
    const outcome = (check: Promise<unknown>, silence: string) =>
      withinDeadline(check, READY_PING_MS, silence).then(
        () => 'ok',
        (err: Error) => err.message,
      );
    const redis = this.container.resolve<RedisClientType | null>(SERVICES.Redis);
    const [database, redisCheck] = await Promise.all([
      outcome(this.knex.raw('select 1'), 'the database does not answer'),
      redis ? outcome(redis.ping(), 'redis does not answer') : null,
    ]);
    return redisCheck === null ? { database } : { database, redis: redisCheck };
  }

  /**
   * Brings up what this process runs, in order: migrations, the plugins' start hooks, queue
   * processors, the scheduler, and last the HTTP listener (so no request arrives before the rest).
   */
  async start(parts: EngineParts): Promise<void> {
    // Built first so that a mistake in its settings (METRICS_ALLOW) stops start-up before anything runs.
    if (parts.http) this.http();
    if (parts.migrate) await this.migrator().latest();
    else await this.warnIfMigratedByNewer();
    watchStalledQueries(this.knex);
    await this.startPlugins();
    if (parts.workers) this.startWorkers();
    if (parts.scheduler) this.startScheduler();
    if (parts.http) await this.listen();
  }

  /**
   * A process started without migrating (`--no-migrate`, a worker) on a database a newer release migrated
   * runs on a schema it does not know: said once, loudly, at start (`migrate` itself refuses).
   */
  private async warnIfMigratedByNewer(): Promise<void> {
    const status = await this.migrator()
      .status()
      .catch(() => []);
    for (const s of status.filter((n) => n.unknown.length))
      this.logger.warn(
        { plugin: s.plugin, unknown: s.unknown },
        `The database holds migrations of ${s.plugin} that release ${s.version} does not have (${s.unknown.join(', ')}): a newer release migrated it, and this process may fail where the schema changed. Run the newer release.`,
      );
  }

  /** Starts the queue processors every plugin declares. */
  startWorkers(): void {
    if (this.workersStarted) return;
    this.workersStarted = true;
    // A job waits while the database lacks migrations of this release (docs/decisions.md, "Work waits for its schema").
    const queues = gatedQueues(this.container.resolve<JobQueues>(SERVICES.Queues), this.schemaGate);
    for (const { plugin } of this.plugins) plugin.jobs?.(queues, this.contexts.get(plugin.id)!);
  }

  /** Starts the recurring tick; only one scheduler across all processes runs tasks at a time. */
  startScheduler(): Scheduler {
    if (this.scheduler) return this.scheduler;
    this.scheduler = new Scheduler({
      locks: this.container.resolve<Locks>(SERVICES.Locks),
      // Without Redis the locks live in this process: the leader lock goes to the database all processes share.
      ...(this.config.redisUrl ? {} : { leaderLocks: this.databaseLocks() }),
      logger: this.logger.child({ component: 'scheduler' }),
      clock: this.container.resolve<Clock>(SERVICES.Clock),
      schemaReady: () => this.schemaGate.isOpen(),
    });
    for (const { plugin } of this.plugins) {
      for (const task of plugin.recurring?.(this.contexts.get(plugin.id)!) ?? []) this.scheduler.register(task);
    }
    this.scheduler.start();
    return this.scheduler;
  }

  /** Locks in the database, staying in this process (and saying so every 10 s) while it lacks their table. */
  private databaseLocks(): DatabaseLocks {
    const notMigrated = new RepeatedWarning();
    return new DatabaseLocks(this.knex, {
      onSchemaBehind: (err) =>
        notMigrated.warn(
          this.logger,
          { err },
          'the database is not migrated to core 1.2 (run migrate): the scheduler runs here without a lock other processes see',
        ),
    });
  }

  /** Runs every plugin's start hook, once. */
  async startPlugins(): Promise<void> {
    if (this.pluginsStarted) return;
    this.pluginsStarted = true;
    for (const { plugin } of this.plugins) await plugin.start?.(this.contexts.get(plugin.id)!);
  }

  listen(): Promise<http.Server> {
    return new Promise((resolve, reject) => {
      const server = http.createServer(this.http().callback());
      server.once('error', reject);
      server.listen(this.config.port, this.config.host, () => {
        this.server = server;
        resolve(server);
      });
    });
  }

  /**
   * Graceful: stop accepting connections and answer requests on open ones 503 (`Connection: close`),
   * let in-flight requests finish (those whose client hung up too), then jobs, then close every pool.
   */
  /** Graceful and once: a second call waits for the first. */
  close(): Promise<void> {
    this.closing ??= this.shutDown();
    return this.closing;
  }

  private async shutDown(): Promise<void> {
    const timeout = this.config.shutdownTimeoutMs;
    const deadline = Date.now() + timeout;
    this.shutdownGate.close();
    // Work held for a migration that has not come stays held: the queues' close gives up on it below.
    this.schemaGate.close();
    if (this.server) await closeServer(this.server, timeout);
    if (!(await this.shutdownGate.drained(Math.max(0, deadline - Date.now())))) {
      this.logger.warn({ timeoutMs: timeout }, 'requests still running at the shutdown timeout; closing pools anyway');
    }
    // A task hung on Redis gone away (its commands queued for ever), or on a stalled database, would hold
    // the process for good after SIGTERM: the scheduler has what is left of the time, 2 s at least.
    if (this.scheduler)
      await withinDeadline(
        this.scheduler.stop(),
        Math.max(SCHEDULER_STOP_MIN_MS, deadline - Date.now()),
        'the scheduler did not stop in time',
      ).catch((err: Error) => this.logger.warn(`${err.message}: its running tasks are left to end with the process`));
    if (this.pluginsStarted) {
      for (const { plugin } of [...this.plugins].reverse()) await plugin.stop?.(this.contexts.get(plugin.id)!);
    }
    await closeSharedServices(this.container, Math.max(0, deadline - Date.now()));
  }
}

function closeServer(server: http.Server, timeoutMs: number): Promise<void> {
  return new Promise((resolve) => {
    const force = setTimeout(() => server.closeAllConnections(), timeoutMs);
    server.close(() => {
      clearTimeout(force);
      resolve();
    });
    server.closeIdleConnections();
  });
}
