import type { Command } from 'commander';
import { CliError, idOf, printResult } from '@switchboard/core';
import type { PluginContext } from '@switchboard/core';
import { AnalyticsRebuild } from './rebuild';

/** `campaign:analytics:rebuild [--org ID]`: the daily figures recomputed from the rows. */
export function analyticsCommands(program: Command, context: () => Promise<PluginContext>): void {
  program
    .command('campaign:analytics:rebuild')
    .description("recompute analytics' daily figures from the rows (after upgrading to campaign 1.10)")
    .option('--org <id>', 'only this organization')
    .option('--json', 'print one JSON object')
    .action(async (options: { org?: string; json?: boolean }) => {
      const org = options.org === undefined ? undefined : idOf(options.org);
      if (org === null) throw new CliError('--org must be an organization id');
      const result = await (await context()).container.resolve(AnalyticsRebuild).run(org);
      printResult(
        options.json,
        result,
        `rebuilt the analytics of ${result.organizations} organization(s): ${result.rows} daily rows`,
      );
    });
}
