import type { OutgoingIds, ProviderAdapter } from '@switchboard/provider-kit';

/** What a provider's key looks like: `provider_a`, or a third party's `provider_f`, `acme_mail`. */
export const PROVIDER_KEY_PATTERN = '^[a-z][a-z0-9_]{0,63}$';

/**
 * `plugins.campaign.options.providers`: the adapter package of each enabled provider, the built-in ones'
 * or a third party's (any key; the package must export the adapter of that key).
 */
export const providersOptionsSchema = {
  type: 'object',
  propertyNames: { pattern: PROVIDER_KEY_PATTERN },
  additionalProperties: { type: 'string', minLength: 1 },
} as const;

/** The adapters built into this repository, enabled when the host names none. */
export const BUILT_IN_PROVIDERS: Record<string, string> = {
  provider_a: '@switchboard/provider-a',
  provider_b: '@switchboard/provider-b',
  provider_c: '@switchboard/provider-c',
  provider_d: '@switchboard/provider-d',
  provider_e: '@switchboard/provider-e',
};

/** The enabled provider adapters, by key. */
export class ProviderAdapters {
  constructor(private readonly adapters: Map<string, ProviderAdapter>) {}

  get(key: string): ProviderAdapter | undefined {
    return this.adapters.get(key);
  }

  keys(): string[] {
    return [...this.adapters.keys()];
  }

  /** Every enabled adapter's headers: a mail relayed through any of them comes back linked to our ids. */
  outgoingHeaders(ids: OutgoingIds): Record<string, string> {
    const headers: Record<string, string> = {};
    for (const adapter of this.adapters.values()) Object.assign(headers, adapter.outgoingHeaders(ids));
    return headers;
  }
}

/**
 * Loads each named package from where the host installed it; a package that is missing or does not
 * export an adapter of that key stops start-up with a message saying what to do.
 */
export function loadProviderAdapters(packages: Partial<Record<string, string>>): ProviderAdapters {
  const adapters = new Map<string, ProviderAdapter>();
  for (const [key, name] of Object.entries(packages)) {
    if (!name) continue;
    let loaded: { default?: ProviderAdapter } & Partial<ProviderAdapter>;
    try {
      loaded = require(require.resolve(name, { paths: [process.cwd(), __dirname] }));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND') throw err;
      throw new Error(
        `Provider adapter ${key}: package ${name} is not installed. Install it (npm install ${name}) or remove ${key} from plugins.campaign.options.providers`,
      );
    }
    const adapter = (loaded.default ?? loaded) as ProviderAdapter;
    if (adapter.key !== key || typeof adapter.verify !== 'function' || typeof adapter.normalize !== 'function')
      throw new Error(`Provider adapter ${key}: package ${name} does not export the adapter of ${key}`);
    adapters.set(key, adapter);
  }
  return new ProviderAdapters(adapters);
}
