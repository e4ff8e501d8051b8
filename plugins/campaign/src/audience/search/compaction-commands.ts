import type { Command } from 'commander';
import { CliError, idOf, OrganizationService, printResult } from '@switchboard/core';
import type { PluginContext, RecurringTask } from '@switchboard/core';
import { GramCompaction } from './gram-compaction';

/** The scheduler compacts for this long a minute at most, so a big backlog never holds its tick. */
const TASK_BUDGET_MS = 10_000;
/** An idle index is read again for rows to merge this often (a pass reads every row of the index). */
const PASS_INTERVAL_MS = 10 * 60_000;

/** Every minute: goes on with the current pass, or starts a new one when the last ended long enough ago. */
export function searchCompactionTask(ctx: PluginContext): RecurringTask {
  const compaction = ctx.container.resolve(GramCompaction);
  let lastPassEnded = 0;
  return {
    name: 'campaign.search-compaction',
    cron: '0 * * * * *',
    run: async (now) => {
      if (!compaction.inPass && now.getTime() - lastPassEnded < PASS_INTERVAL_MS) return;
      const report = await compaction.run(TASK_BUDGET_MS);
      if (report.complete) lastPassEnded = now.getTime();
      if (report.blocks) ctx.logger.info({ ...report }, 'search index compacted');
    },
  };
}

/** `campaign:search-compact`: merges every part row of the index now (after a big import, say). */
export function searchCompactionCommands(program: Command, context: () => Promise<PluginContext>): void {
  program
    .command('campaign:search-compact')
    .description("merge the substring index's rows now (the scheduler does it every 10 minutes)")
    .option('--org <id>', 'only this organization')
    .option('--json', 'print one JSON object')
    .action(async (options: { org?: string; json?: boolean }) => {
      const org = options.org === undefined ? undefined : idOf(options.org);
      if (org === null) throw new CliError('--org must be an organization id');
      const ctx = await context();
      // As campaign:analytics:rebuild: an organization that does not exist is a mistake, not "nothing to do".
      if (org !== undefined && !(await ctx.container.resolve(OrganizationService).get(org)))
        throw new CliError(`Organization ${org} not found`);
      const started = Date.now();
      const report = await ctx.container.resolve(GramCompaction).run(Infinity, org);
      const result = { ...report, ms: Date.now() - started };
      printResult(
        options.json,
        result,
        `merged ${report.rowsBefore} rows into ${report.rowsAfter} (${report.blocks} blocks) in ${result.ms} ms`,
      );
    });
}
