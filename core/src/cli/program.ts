import { Command, CommanderError } from 'commander';
import { loadConfig, LoadConfigOptions } from '../config/load-config';
import { withServedUrl } from '../config/served-url';
import { createLogger } from '../logger';
import { loadPlugins } from '../plugin/loader';
import { Engine, EngineOptions } from '../engine/engine';
import type { PluginContext } from '../plugin/types';
import { registerMigrationCommands, registerProcessCommands, WithEngine } from './engine-commands';
import { registerAuthCommands } from './auth-commands';
import { knownResources } from '../auth/permissions';
import { printable } from './output';
import { isSchemaBehind } from '../db/errors';

export interface CliOptions extends EngineOptions {
  config?: LoadConfigOptions;
}

/** The `switchboard` command: core commands plus every enabled plugin's own. */
export function buildProgram(options: CliOptions = {}): Command {
  const config = loadConfig(options.config);
  const plugins = loadPlugins(config.plugins, options.resolvePlugin);
  const program = new Command('switchboard')
    .description('Switchboard engine')
    .version(config.version, '-V, --version', 'print the version')
    .showHelpAfterError();

  let engine: Engine | undefined;
  // `serve` is reached at its own HOST:PORT (or PUBLIC_URL); every other command at the URL serve recorded.
  // A command that answers and ends logs on stderr: its stdout is its answer (one JSON object with --json).
  const open = async () =>
    (engine ??= await Engine.create(program.args[0] === 'serve' ? config : withServedUrl(config), {
      ...options,
      logger: options.logger ?? (keepsRunning(program) ? undefined : createLogger(config.logLevel, 'stderr')),
    }));
  const withEngine: WithEngine = async (fn, keepOpen = false) => {
    try {
      return await fn(await open());
    } finally {
      if (!keepOpen && engine) {
        await engine.close();
        engine = undefined;
      }
    }
  };

  registerProcessCommands(program, withEngine, config);
  registerMigrationCommands(program, withEngine);
  registerAuthCommands(program, withEngine, knownResources(plugins.map((l) => l.plugin)));
  for (const { plugin } of plugins) {
    const context = async (): Promise<PluginContext> => (await open()).contexts.get(plugin.id)!;
    plugin.commands?.(program, context);
  }
  // Plugin command actions that open the engine close it when the command finishes.
  program.hook('postAction', async () => {
    if (engine && !keepsRunning(program)) {
      await engine.close();
      engine = undefined;
    }
  });
  return program;
}

const LONG_RUNNING = new Set(['serve', 'worker', 'scheduler']);
const keepsRunning = (program: Command) => LONG_RUNNING.has(program.args[0]);

/** Runs the CLI; errors print one line (or a JSON object with --json) and set exit code 1. */
export async function runCli(argv: string[], options: CliOptions = {}): Promise<number> {
  const json = argv.includes('--json');
  try {
    const program = buildProgram(options);
    // Each command's own: commander gives a command created before the call none of its parent's.
    for (const command of [program, ...program.commands]) {
      command.exitOverride();
      // With --json a usage error is one JSON object too (commander wrote its line and the whole help).
      if (json) quietUsageErrors(command);
    }
    await program.parseAsync(argv);
    return 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (json && err.exitCode !== 0)
        process.stderr.write(`${JSON.stringify({ error: err.message.replace(/^error: /, '') })}\n`);
      return err.exitCode;
    }
    // The driver's message names the missing table or column after the statement's text.
    const message = isSchemaBehind(err)
      ? `the database is not migrated to this version: run \`switchboard migrate\` first (\`serve\` migrates as it starts, unless --no-migrate) (${(err as Error).message.split(' - ').pop()})`
      : (err as Error).message;
    process.stderr.write(json ? `${JSON.stringify({ error: message })}\n` : `Error: ${printable(message)}\n`);
    return 1;
  }
}

/** A command whose usage errors commander does not print (the caller prints them). */
function quietUsageErrors(command: Command): void {
  command.showHelpAfterError(false).configureOutput({ writeErr: () => undefined });
}
