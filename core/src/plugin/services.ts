import type { PluginContext, ServiceProvision, ServiceToken } from './types';

/** A service's token by its name (types.ts, ServiceToken): the provider and the plugins using it each define it. */
export const defineService = <T>(name: string, usualProvider?: string): ServiceToken<T> => ({
  name,
  key: `service:${name}`,
  ...(usualProvider && { usualProvider }),
});

/** One entry of a plugin's `provides` (types.ts, ServiceProvision). */
export const provide = <T>(token: ServiceToken<T>, make: (ctx: PluginContext) => T): ServiceProvision<T> => ({
  token,
  make,
});
