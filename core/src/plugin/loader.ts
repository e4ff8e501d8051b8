import type { PluginConfig } from '../config/types';
import { settingsAjv } from '../config/settings-ajv';
import { compileOnce } from '../schemas/compile-once';
import type { Plugin } from './types';

export class PluginLoadError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PluginLoadError';
  }
}

export interface LoadedPlugin {
  plugin: Plugin;
  config: PluginConfig;
  options: Record<string, unknown>;
}

/** A package's main module, or undefined when the package is not installed. */
type Resolve = (pkg: string) => unknown;

/** Loads plugin packages the way the host's own code would: from its folder's node_modules. */
export const hostResolver =
  (hostDir: string): Resolve =>
  (pkg) => {
    let file: string;
    try {
      file = require.resolve(pkg, { paths: [hostDir, __dirname] });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND') return undefined;
      throw err;
    }
    return require(file);
  };

function isPlugin(value: unknown): value is Plugin {
  const p = value as Plugin | undefined;
  return !!p && typeof p === 'object' && typeof p.id === 'string' && typeof p.version === 'string';
}

function importPlugin(config: PluginConfig, resolve: Resolve): Plugin {
  let mod: unknown;
  try {
    mod = resolve(config.package);
  } catch (err) {
    throw new PluginLoadError(`Plugin "${config.id}" (${config.package}) failed to load: ${(err as Error).message}`);
  }
  if (mod === undefined) {
    throw new PluginLoadError(
      `Plugin "${config.id}" needs the package "${config.package}", which is not installed. ` +
        `Run "npm install ${config.package}", or remove "${config.id}" from PLUGINS / config/switchboard.json.`,
    );
  }
  const plugin = (mod as { default?: unknown }).default ?? mod;
  if (!isPlugin(plugin)) {
    throw new PluginLoadError(
      `Package "${config.package}" does not default-export a plugin (an object with id and version); check the package name for "${config.id}".`,
    );
  }
  if (plugin.id !== config.id) {
    throw new PluginLoadError(
      `Package "${config.package}" is the plugin "${plugin.id}", but config enables it as "${config.id}".`,
    );
  }
  return plugin;
}

function validateOptions(plugin: Plugin, config: PluginConfig): Record<string, unknown> {
  const options = structuredClone(config.options);
  if (!plugin.optionsSchema) return options;
  const validate = compileOnce(settingsAjv(), plugin.optionsSchema);
  if (!validate(options)) {
    const problems = (validate.errors ?? []).map((e) => `${e.instancePath || '(options)'} ${e.message}`).join('; ');
    throw new PluginLoadError(
      `Options of plugin "${plugin.id}" are invalid: ${problems}. Fix plugins.${plugin.id}.options in config/switchboard.json.`,
    );
  }
  return options;
}

/** Which enabled plugin provides each service, by name; two providers of one name are refused. */
function serviceProviders(loaded: LoadedPlugin[]): Map<string, string> {
  const providers = new Map<string, string>();
  for (const { plugin } of loaded) {
    for (const { token } of plugin.provides ?? []) {
      const other = providers.get(token.name);
      if (other !== undefined)
        throw new PluginLoadError(
          `Plugins "${other}" and "${plugin.id}" both provide the service "${token.name}": enable only one of them.`,
        );
      providers.set(token.name, plugin.id);
    }
  }
  return providers;
}

/** The plugins `l` needs before it: those it depends on, then the providers of the services it needs. */
function prerequisites(l: LoadedPlugin, providers: Map<string, string>): string[] {
  const id = l.plugin.id;
  const needed = (l.plugin.needs ?? []).map((token) => {
    const provider = providers.get(token.name);
    if (provider !== undefined) return provider;
    const hint = token.usualProvider
      ? `enable "${token.usualProvider}", which provides it (PLUGINS / config/switchboard.json).`
      : 'enable a plugin that provides it (PLUGINS / config/switchboard.json).';
    throw new PluginLoadError(
      `Plugin "${id}" needs the service "${token.name}", which no enabled plugin provides: ${hint}`,
    );
  });
  return [...(l.plugin.dependsOn ?? []), ...needed.filter((provider) => provider !== id)];
}

/** Dependencies (and providers of needed services) first; enabled order otherwise. */
function orderByDependencies(loaded: LoadedPlugin[]): LoadedPlugin[] {
  const byId = new Map(loaded.map((l) => [l.plugin.id, l]));
  const providers = serviceProviders(loaded);
  const ordered: LoadedPlugin[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (l: LoadedPlugin, chain: string[]) => {
    const id = l.plugin.id;
    if (state.get(id) === 'done') return;
    if (state.get(id) === 'visiting')
      throw new PluginLoadError(`Plugins depend on each other in a cycle: ${[...chain, id].join(' -> ')}`);
    state.set(id, 'visiting');
    for (const dep of prerequisites(l, providers)) {
      const target = byId.get(dep);
      if (!target)
        throw new PluginLoadError(
          `Plugin "${id}" depends on plugin "${dep}", which is not enabled: add "${dep}" to PLUGINS / config/switchboard.json.`,
        );
      visit(target, [...chain, id]);
    }
    state.set(id, 'done');
    ordered.push(l);
  };
  for (const l of loaded) visit(l, []);
  return ordered;
}

export function loadPlugins(configs: PluginConfig[], resolve: Resolve = hostResolver(process.cwd())): LoadedPlugin[] {
  const seen = new Set<string>();
  const loaded = configs.map((config) => {
    if (seen.has(config.id)) throw new PluginLoadError(`Plugin "${config.id}" is enabled twice`);
    seen.add(config.id);
    const plugin = importPlugin(config, resolve);
    return { plugin, config, options: validateOptions(plugin, config) };
  });
  return orderByDependencies(loaded);
}
