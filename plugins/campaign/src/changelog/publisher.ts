import crypto from 'node:crypto';
import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import {
  Clock,
  insertedId,
  insertRows,
  isUniqueViolation,
  JobQueues,
  queueSoon,
  SERVICES,
  toInt,
} from '@switchboard/core';
import type { Logger } from '@switchboard/core';
import { CHANGELOG_NOTICES_JOB } from './jobs';

/** A changelog entry as the host publishes it; the key makes publishing it again a no-op. */
export interface ChangelogEntry {
  key?: string;
  title: string;
  body: string;
}

const PAGE = 1_000;

/** Without a key, the entry's text is its key: the same title and body are one entry. */
export const entryKeyOf = (entry: ChangelogEntry): string =>
  entry.key?.trim() || crypto.createHash('sha256').update(`${entry.title}\n${entry.body}`).digest('hex').slice(0, 40);

/**
 * `campaign:changelog:publish`: stores each new entry and, in the same transaction, its pending notices to
 * every confirmed address of every organization (one e-mail an address, and a webhook POST to each of its
 * subscriptions' urls), then wakes the notice job. An entry already published (same key) is skipped, so
 * nobody hears of it twice.
 */
@injectable()
export class ChangelogPublisher {
  constructor(
    @inject(SERVICES.Knex) private readonly knex: Knex,
    @inject(SERVICES.Clock) private readonly clock: Clock,
    @inject(SERVICES.Queues) private readonly queues: JobQueues,
    @inject(SERVICES.Logger) private readonly logger: Logger,
  ) {}

  async publish(entries: ChangelogEntry[]) {
    const published: Array<{ key: string; title: string; notices: number }> = [];
    const skipped: string[] = [];
    for (const entry of entries) {
      const key = entryKeyOf(entry);
      const notices = await this.knex
        .transaction(async (trx) => {
          if (await trx('changelog_entries').where({ entry_key: key }).first('id')) return null;
          const now = this.clock.now();
          const id = insertedId(
            await trx('changelog_entries').insert({
              entry_key: key,
              // By code points: a cut between a surrogate pair stored U+FFFD, which went into the subject.
              title: Array.from(entry.title).slice(0, 255).join(''),
              body: entry.body,
              published_at: now,
            }),
          );
          return this.addNotices(trx, id, now);
        })
        // Published by another run at the same moment.
        .catch((err: unknown) => {
          if (isUniqueViolation(err)) return null;
          throw err;
        });
      if (notices === null) skipped.push(key);
      else published.push({ key, title: entry.title, notices });
    }
    // Should Redis not take it, the minute's task wakes the job while notices are due.
    if (published.some((p) => p.notices))
      await queueSoon(this.queues.get(CHANGELOG_NOTICES_JOB).add({}), this.logger, 'changelog notice job');
    return { published, skipped };
  }

  private async addNotices(trx: Knex.Transaction, entryId: number, now: Date): Promise<number> {
    let added = 0;
    const mailed = new Set<number>();
    for (let after = 0; ;) {
      // Only addresses that confirmed (e-mail consent), and never after an unsubscribe.
      const subscriptions: Array<Record<string, unknown>> = await trx('changelog_subscriptions as s')
        .join('changelog_addresses as a', 'a.id', 's.address_id')
        .whereNull('a.unsubscribed_at')
        .whereNotNull('a.confirmed_at')
        .andWhere('s.id', '>', after)
        .orderBy('s.id')
        .limit(PAGE)
        .select('s.id', 's.webhook_url', 's.address_id');
      if (!subscriptions.length) return added;
      after = toInt(subscriptions[subscriptions.length - 1].id);
      const notice = (id: unknown, channel: string) => ({
        entry_id: entryId,
        subscription_id: toInt(id),
        channel,
        state: 'pending',
        attempts: 0,
        next_attempt_at: now,
      });
      // One mail an address (its first subscription's: the same entry through each of its urls was mailed
      // again until session 36), a POST to every url.
      const rows = subscriptions.flatMap((s) => {
        const address = toInt(s.address_id);
        const mail = !mailed.has(address);
        mailed.add(address);
        return [...(mail ? [notice(s.id, 'email')] : []), ...(s.webhook_url ? [notice(s.id, 'webhook')] : [])];
      });
      // In statements SQLite takes (one insert of 2,000 rows passed its 500 compound terms: past 500
      // subscriptions no entry could be published, session 35).
      await insertRows(trx, 'changelog_notices', rows, { ignoreExisting: true });
      added += rows.length;
    }
  }
}
