import type { DependencyContainer } from 'tsyringe';
import type { Command } from 'commander';
import type { Logger } from 'pino';
import type { AppConfig, RateLimitPolicy } from '../config/types';
import type { JobQueues } from '../queue/types';
import type { PluginApi } from '../http/api-registry';
import type { ServiceProvision, ServiceToken } from './services';

export interface PluginContext<O = Record<string, unknown>> {
  id: string;
  options: O;
  config: AppConfig;
  /** The plugin's own child container; shared services resolve from the root above it. */
  container: DependencyContainer;
  logger: Logger;
}

export interface RecurringTask {
  name: string;
  /** croner pattern, evaluated in UTC. */
  cron: string;
  run(now: Date): Promise<void>;
}

/** What a plugin package default-exports. */
export interface Plugin<O = Record<string, unknown>> {
  id: string;
  /** Highest migrations/<x.y> folder this release may run. */
  version: string;
  dependsOn?: string[];
  /**
   * Services this plugin makes for others (`provide(TOKEN, (ctx) => ctx.container.resolve(Impl))`): made once
   * per engine, on first use, and injectable only into the plugins that name them in `needs`.
   */
  provides?: ServiceProvision[];
  /**
   * Services of other plugins this one injects (`@inject(TOKEN.key)`): each must be provided by an enabled
   * plugin, or start-up stops naming it; providers come first, as with `dependsOn`.
   */
  needs?: ServiceToken<unknown>[];
  /** JSON schema of the options the host gives in config/switchboard.json. */
  optionsSchema?: object;
  /**
   * JSON schema of the environment variables the plugin reads from `ctx.config.env` (an object of strings, each
   * with its description): checked at start-up, so a wrong or missing one stops it with a message naming it.
   */
  envSchema?: object;
  /** Absolute path of the compiled migrations folder. */
  migrationsDir?: string;
  /**
   * What tokens of this plugin's routes are granted (`subscribers` for `subscribers:read|write`). A
   * route may name the resources of any enabled plugin; `token:create` accepts only known ones.
   */
  resources?: string[];
  /** Default rate limits of the plugin's routes; config may replace them. */
  rateLimits?: RateLimitPolicy;
  register?(ctx: PluginContext<O>): void | Promise<void>;
  /** `api` is bound to this plugin: its groups are billed to its rate-limit policy. */
  routes?(api: PluginApi, ctx: PluginContext<O>): void;
  jobs?(queues: JobQueues, ctx: PluginContext<O>): void;
  recurring?(ctx: PluginContext<O>): RecurringTask[];
  commands?(program: Command, ctx: () => Promise<PluginContext<O>>): void;
  start?(ctx: PluginContext<O>): Promise<void>;
  stop?(ctx: PluginContext<O>): Promise<void>;
}

export const definePlugin = <O = Record<string, unknown>>(plugin: Plugin<O>): Plugin<O> => plugin;
