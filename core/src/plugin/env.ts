import type { Plugin } from './types';
import { PluginLoadError } from './loader';
import { settingsAjv } from '../config/settings-ajv';
import { compileOnce } from '../schemas/compile-once';

/**
 * The environment variables a plugin declares (`envSchema`), checked at start-up like its options: a variable
 * missing or wrong stops start-up with a message naming it. Empty values count as unset (`config.env`).
 */
export function checkPluginEnv(plugin: Plugin, env: Readonly<Record<string, string | undefined>>): void {
  if (!plugin.envSchema) return;
  const validate = compileOnce(settingsAjv(), plugin.envSchema);
  if (validate({ ...env })) return;
  const problems = (validate.errors ?? [])
    .filter((e) => e.keyword !== 'if')
    .map((e) =>
      e.keyword === 'required'
        ? `${e.params.missingProperty} is required`
        : `${e.instancePath.slice(1)} ${e.message}${e.keyword === 'enum' ? ` (${e.params.allowedValues.join(', ')})` : ''}`,
    );
  throw new PluginLoadError(
    `Environment of plugin "${plugin.id}" is invalid: ${[...new Set(problems)].join('; ')}. Set the variables in the environment (README, Configuration).`,
  );
}
