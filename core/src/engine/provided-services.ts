import type { DependencyContainer } from 'tsyringe';
import type { PluginContext } from '../plugin/types';
import type { ServiceProvision, ServiceToken } from '../plugin/types';

/**
 * The services plugins provide one another in one engine (a plugin's `provides` and `needs`): each made once,
 * on first use, by its provider, and registered only in the containers of its provider and of the plugins
 * that name it in `needs`, so a plugin cannot inject what it did not declare.
 */
export class ProvidedServices {
  private readonly makers = new Map<string, () => unknown>();

  add(provision: ServiceProvision, ctx: PluginContext): void {
    let made: { value: unknown } | undefined;
    this.makers.set(provision.token.name, () => (made ??= { value: provision.make(ctx) }).value);
  }

  injectInto(container: DependencyContainer, token: ServiceToken<unknown>): void {
    const make = this.makers.get(token.name);
    if (!make) throw new Error(`No enabled plugin provides the service "${token.name}"`);
    container.register(token.key, { useFactory: make });
  }
}
