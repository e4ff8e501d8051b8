import type { Command } from 'commander';
import { CliError, JobQueues, printResult, SERVICES } from '@switchboard/core';
import type { PluginContext, RecurringTask } from '@switchboard/core';
import { ChangelogPublisher, ChangelogEntry } from './publisher';
import { ChangelogNotifier } from './notifier';
import { CHANGELOG_CONFIRMATION_JOB, CHANGELOG_NOTICES_JOB } from './jobs';
import { ChangelogConsent } from './consent';
import { assertPublishable, readReleases } from './release-files';

/** The notice job: a worker sends what is due; and the confirmation mails of new subscriptions. */
export function processChangelogNotices(queues: JobQueues, ctx: PluginContext): void {
  const notifier = ctx.container.resolve(ChangelogNotifier);
  queues.get(CHANGELOG_NOTICES_JOB).process(1, async () => {
    await notifier.run();
  });
  const consent = ctx.container.resolve(ChangelogConsent);
  queues.get(CHANGELOG_CONFIRMATION_JOB).process(2, async (job) => {
    await consent.send(job.data.subscriptionId);
  });
}

/**
 * Every minute: wakes the notice job when notices are due (retries, or a queue that lost its job), and
 * queues again the confirmation mails whose job was lost.
 */
export function changelogNoticesTask(ctx: PluginContext): RecurringTask {
  const notifier = ctx.container.resolve(ChangelogNotifier);
  const consent = ctx.container.resolve(ChangelogConsent);
  const queues = ctx.container.resolve<JobQueues>(SERVICES.Queues);
  return {
    name: 'campaign.changelog-notices',
    cron: '30 * * * * *',
    run: async (now) => {
      await consent.sweep(now);
      if (await notifier.due()) await queues.get(CHANGELOG_NOTICES_JOB).add({});
    },
  };
}

/** `campaign:changelog:publish (--title T --body B [--key K] | --from FILE_OR_FOLDER)`. */
export function changelogCommands(program: Command, context: () => Promise<PluginContext>): void {
  program
    .command('campaign:changelog:publish')
    .description('publish changelog entries: every subscription gets a mail and, with a webhook url, a signed POST')
    .option('--title <text>', 'the entry title')
    .option('--body <text>', 'the entry text')
    .option('--key <key>', 'the entry key (default: from its text); a published key is not published again')
    .option('--from <path>', 'a .json or .md release file, or a folder of .md files (one release each)')
    .option('--json', 'print one JSON object')
    .action(async (o: { title?: string; body?: string; key?: string; from?: string; json?: boolean }) => {
      let entries: ChangelogEntry[];
      if (o.from !== undefined) {
        // A file's entries name their own keys: --key beside --from was ignored without a word.
        if (o.title !== undefined || o.body !== undefined || o.key !== undefined)
          throw new CliError('give --from, or --title and --body (and --key)');
        entries = await readReleases(o.from);
      } else {
        if (!o.title?.trim() || o.body === undefined) throw new CliError('--title and --body are required (or --from)');
        entries = [{ key: o.key, title: o.title.trim(), body: o.body }];
      }
      assertPublishable(entries);
      const result = await (await context()).container.resolve(ChangelogPublisher).publish(entries);
      const lines = [
        ...result.published.map((p) => `published ${p.key}: ${p.title} (${p.notices} notices queued)`),
        ...result.skipped.map((k) => `skipped ${k}: published before`),
      ];
      printResult(o.json, result, lines.join('\n') || 'nothing to publish');
    });
}
