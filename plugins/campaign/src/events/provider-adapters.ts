import type { Logger } from 'pino';
import { RepeatedWarning } from '@switchboard/core';
import type { OutgoingIds, ProviderAdapter } from '@switchboard/provider-kit';

/** What a provider's key looks like: `provider_a`, or a third party's `provider_f`, `acme_mail` (the tables keep 32 characters). */
export const PROVIDER_KEY_PATTERN = '^[a-z][a-z0-9_]{0,31}$';

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
  private readonly failing = new Map<string, RepeatedWarning>();

  constructor(
    private readonly adapters: Map<string, ProviderAdapter>,
    private readonly logger?: Logger,
  ) {}

  get(key: string): ProviderAdapter | undefined {
    return this.adapters.get(key);
  }

  keys(): string[] {
    return [...this.adapters.keys()];
  }

  /**
   * Every enabled adapter's headers: a mail relayed through any of them comes back linked to our ids. A
   * name is taken once, whatever its case (the first adapter's); an adapter that throws, or gives a value
   * that is no text, adds nothing and is logged (once a minute): one adapter's bug never stops the mail.
   */
  outgoingHeaders(ids: OutgoingIds): Record<string, string> {
    const headers: Record<string, string> = {};
    const taken = new Set<string>();
    for (const [key, adapter] of this.adapters) {
      let own: Record<string, unknown>;
      try {
        own = adapter.outgoingHeaders(ids) ?? {};
      } catch (err) {
        this.warnHeaders(key, `outgoingHeaders threw: ${(err as Error)?.message ?? String(err)}`);
        continue;
      }
      for (const [name, value] of Object.entries(own)) {
        if (typeof value !== 'string') {
          this.warnHeaders(key, `outgoingHeaders gave ${name} a value that is no text`);
          continue;
        }
        if (taken.has(name.toLowerCase())) continue;
        taken.add(name.toLowerCase());
        headers[name] = value;
      }
    }
    return headers;
  }

  private warnHeaders(key: string, problem: string): void {
    this.warn(key, 'headers', `${problem}; mail goes without its headers`);
  }

  /** An adapter's problem of one kind (`topic`), logged once a minute per adapter and kind. */
  warn(key: string, topic: string, problem: string): void {
    if (!this.logger) return;
    const name = `${key} ${topic}`;
    const once = this.failing.get(name) ?? this.failing.set(name, new RepeatedWarning(60_000)).get(name)!;
    once.warn(this.logger, { provider: key }, `Provider adapter ${key}: ${problem}`);
  }
}

/**
 * Loads each named package from where the host installed it; a package that is missing or does not
 * export an adapter of that key stops start-up with a message saying what to do.
 */
export function loadProviderAdapters(packages: Partial<Record<string, string>>, logger?: Logger): ProviderAdapters {
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
      throw new Error(
        `Provider adapter ${key}: package ${name} does not export the adapter of ${key} (${found(loaded)})`,
      );
    adapters.set(key, adapter);
  }
  return new ProviderAdapters(adapters, logger);
}

/** What a package exports instead of the adapter, for the message that stops start-up. */
function found(loaded: object): string {
  const adapter = ((loaded as { default?: unknown }).default ?? loaded) as Partial<ProviderAdapter>;
  if (typeof adapter?.key === 'string')
    return typeof adapter.verify === 'function' && typeof adapter.normalize === 'function'
      ? `it exports the adapter of ${adapter.key}`
      : `its export of key ${adapter.key} lacks verify or normalize`;
  const names = Object.keys(loaded ?? {}).slice(0, 10);
  return `the adapter must be its main export (module.exports or default), with key, verify and normalize; it exports ${
    names.length ? names.join(', ') : 'nothing'
  }`;
}
