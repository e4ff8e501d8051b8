import type { Command } from 'commander';
import { CliError, idOf, printResult } from '@switchboard/core';
import type { PluginContext } from '@switchboard/core';
import { DEFAULT_GRACE_SECONDS, HeartbeatService } from './service';
import { asCliError } from '../shared/cli';

const seconds = (value: string | undefined, name: string, fallback?: number): number => {
  if (value === undefined && fallback !== undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 31_536_000)
    throw new CliError(`${name} must be a whole number of seconds from 1 to 31536000 (a year), got "${value}"`);
  return n;
};

/** `servermonitor:heartbeat:create --server ID --interval SECONDS [--grace SECONDS]`: prints the ping URL. */
export function heartbeatCommands(program: Command, context: () => Promise<PluginContext>): void {
  program
    .command('servermonitor:heartbeat:create')
    .description('create a heartbeat for a server and print its ping URL')
    .requiredOption('--server <id>', 'the server')
    .requiredOption('--interval <seconds>', 'a ping is expected at least this often')
    .option('--grace <seconds>', `how late a ping may be before it is missing (default ${DEFAULT_GRACE_SECONDS})`)
    .option('--json', 'print one JSON object')
    .action(async (options: { server: string; interval: string; grace?: string; json?: boolean }) => {
      const server = idOf(options.server);
      if (server === null) throw new CliError('--server must be a server id');
      const interval = seconds(options.interval, '--interval');
      const grace = seconds(options.grace, '--grace', DEFAULT_GRACE_SECONDS);
      const ctx = await context();
      const beat = await ctx.container.resolve(HeartbeatService).create(server, interval, grace).catch(asCliError);
      printResult(
        options.json,
        {
          id: beat.id,
          server_id: server,
          interval_seconds: interval,
          grace_seconds: grace,
          token: beat.token,
          ping_url: beat.url,
        },
        beat.url,
      );
    });
}
