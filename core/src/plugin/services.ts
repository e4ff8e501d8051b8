import type { PluginContext } from './types';

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

export const defineService = <T>(name: string, usualProvider?: string): ServiceToken<T> => ({
  name,
  key: `service:${name}`,
  ...(usualProvider && { usualProvider }),
});

/** One entry of a plugin's `provides`: the token and how the plugin makes it, once per engine. */
export interface ServiceProvision<T = unknown> {
  token: ServiceToken<T>;
  /** Called on first use, after the providing plugin's `register`: resolve from `ctx.container`. */
  make(ctx: PluginContext): T;
}

export const provide = <T>(token: ServiceToken<T>, make: (ctx: PluginContext) => T): ServiceProvision<T> => ({
  token,
  make,
});
