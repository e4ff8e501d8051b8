import type { Command } from 'commander';
import type { Knex } from 'knex';
import { CliError, idOf, JobQueues, printResult, SERVICES } from '@switchboard/core';
import type { PluginContext } from '@switchboard/core';
import { STATS_REBUILD_JOB, StatsRebuild } from './stats-rebuild';

/** The rebuild job: a worker recomputes a message's statistics from its records. */
export function processStatsRebuilds(queues: JobQueues, ctx: PluginContext): void {
  const rebuild = ctx.container.resolve(StatsRebuild);
  queues.get(STATS_REBUILD_JOB).process(1, async (job) => {
    await rebuild.run(job.data.organizationId, job.data.messageId);
  });
}

/** `campaign:stats-rebuild --org ID --message ID [--queue]`: now, or by a worker. */
export function statsRebuildCommands(program: Command, context: () => Promise<PluginContext>): void {
  program
    .command('campaign:stats-rebuild')
    .description("recompute a message's statistics from its event records")
    .requiredOption('--org <id>', 'the organization of the message')
    .requiredOption('--message <id>', 'the message')
    .option('--queue', 'let a worker do it')
    .option('--json', 'print one JSON object')
    .action(async (options: { org: string; message: string; queue?: boolean; json?: boolean }) => {
      const [org, message] = [idOf(options.org), idOf(options.message)];
      if (org === null || message === null) throw new CliError('--org and --message must be ids');
      const ctx = await context();
      if (options.queue) {
        // Without Redis the queue is this command's own memory, gone when it exits: no worker would see it.
        if (!ctx.config.redisUrl)
          throw new CliError(
            '--queue needs REDIS_URL (a worker takes the job from Redis); without it, leave --queue out',
          );
        const knex = ctx.container.resolve<Knex>(SERVICES.Knex);
        if (!(await knex('messages').where({ organization_id: org, id: message }).first('id')))
          throw new CliError(`Message ${message} not found`);
        await ctx.container
          .resolve<JobQueues>(SERVICES.Queues)
          .get(STATS_REBUILD_JOB)
          .add({ organizationId: org, messageId: message });
        return printResult(options.json, { queued: true }, `queued the rebuild of message ${message}`);
      }
      const counters = await ctx.container.resolve(StatsRebuild).run(org, message);
      printResult(options.json, counters, `rebuilt message ${message}: ${JSON.stringify(counters)}`);
    });
}
