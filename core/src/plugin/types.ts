import type { DependencyContainer } from 'tsyringe';
import type { Command } from 'commander';
import type { Logger } from 'pino';
import type { AppConfig, RateLimitPolicy } from '../config/types';
import type { JobQueues } from '../queue/types';
import type { PluginApi } from '../http/api-registry';

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

/**
 * A service one plugin provides to others (plugins share services, never tables). The name is the contract:
 * the provider and the plugins that need it may each call `defineService` with it (a plugin importing the
 * other's interface as a type only, never its code), and the engine matches them by name. `T` is the
 * service's interface, so providing it and injecting it are typed.
 */
export interface ServiceToken<T> {
  /** Unique across plugins, e.g. `users.directory`. */
  readonly name: string;
  /** The injection key in the containers of the plugins that need it: `@inject(TOKEN.key)`. */
  readonly key: string;
  /** The plugin usually enabled to provide it, suggested when no enabled plugin does. */
  readonly usualProvider?: string;
  /** Never set: carries `T` for the compiler. */
  readonly __service?: T;
}

/** One entry of a plugin's `provides`: the token and how the plugin makes it, once per engine. */
export interface ServiceProvision<T = unknown> {
  token: ServiceToken<T>;
  /** Called on first use, after the providing plugin's `register`: resolve from `ctx.container`. */
  make(ctx: PluginContext): T;
}
