import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import { AppConfig, Clock, Locks, Mailer, OutboundGuard, SERVICES, toInt, toIsoRequired } from '@switchboard/core';
import { escapeHtml } from '../shared/html';
import { postSigned, retryDelayMs } from '../shared/webhook-poster';
import { ChangelogSecrets } from './secrets';
import { ChangelogUnsubscribe } from './unsubscribe';
import { claimDue, keepLock } from '../shared/leased-rows';
import { noReplyAddress } from '../shared/mail-ids';

/** Notices read at a time, and sent at once. */
const BATCH = 50;
const AT_ONCE = 10;
/** A receiver that has not answered by then has failed this try. */
const TIMEOUT_MS = 10_000;
const LOCK_MS = 30_000;
/** How long a notice taken for sending waits before another run may take it: sends end well before. */
const LEASE_MS = 5 * 60_000;
/** Tries of a notice before it is given up: 1 min, 2, 4 ... up to 6 h between them (with jitter). */
export const NOTICE_TRIES = 10;

interface Notice {
  id: number;
  channel: 'email' | 'webhook';
  attempts: number;
  subscriptionId: number;
  email: string;
  webhookUrl: string | null;
  unsubscribed: boolean;
  entryId: number;
  key: string;
  title: string;
  body: string;
  publishedAt: string;
}

/**
 * Sends due changelog notices: the mail (with an unsubscribe link) or the signed webhook POST. A notice is
 * marked sent once its receiver took it; a failure is tried again later with backoff, then given up.
 * The rows are the truth: a worker killed mid-send leaves the notice pending, sent again once its lease
 * ends (the webhook's `webhook-id` stays the same, so a receiver can drop the repeat).
 */
@injectable()
export class ChangelogNotifier {
  constructor(
    @inject(SERVICES.Knex) private readonly knex: Knex,
    @inject(SERVICES.Clock) private readonly clock: Clock,
    @inject(SERVICES.Locks) private readonly locks: Locks,
    @inject(SERVICES.Mailer) private readonly mailer: Mailer,
    @inject(SERVICES.Config) private readonly config: AppConfig,
    @inject(SERVICES.OutboundGuard) private readonly guard: OutboundGuard,
    @inject(ChangelogSecrets) private readonly secrets: ChangelogSecrets,
    @inject(ChangelogUnsubscribe) private readonly unsubscribes: ChangelogUnsubscribe,
  ) {}

  /** Whether any notice is due now. */
  async due(): Promise<boolean> {
    return Boolean(
      await this.knex('changelog_notices')
        .where('state', 'pending')
        .andWhere('next_attempt_at', '<=', this.clock.now())
        .first('id'),
    );
  }

  /** Sends what is due, one run at a time across processes; counts of this run (null: another runs). */
  async run(): Promise<{ sent: number; retried: number; failed: number; dropped: number } | null> {
    const lock = await this.locks.acquire('campaign.changelog-notices', LOCK_MS);
    if (!lock) return null;
    const kept = keepLock(lock, LOCK_MS);
    const counts = { sent: 0, retried: 0, failed: 0, dropped: 0 };
    try {
      // Once the lock is lost another run may have it: this one takes no more.
      while (kept.held()) {
        const batch = await this.takeDue();
        if (!batch.length) break;
        for (let i = 0; i < batch.length; i += AT_ONCE) {
          const done = await Promise.allSettled(batch.slice(i, i + AT_ONCE).map((n) => this.handle(n)));
          for (const d of done) if (d.status === 'fulfilled') counts[d.value]++;
        }
      }
      return counts;
    } finally {
      kept.stop();
      await lock.release();
    }
  }

  /**
   * The due notices, their due time moved past their sending (a lease): a run that died or lost its lock
   * leaves them to be sent again after it, never at the same time as another run.
   */
  private async takeDue(): Promise<Notice[]> {
    const batch = await this.dueBatch();
    if (!batch.length) return batch;
    const ids = batch.map((n) => n.id);
    const mine = await claimDue(this.knex, 'changelog_notices', ids, this.clock.now(), LEASE_MS);
    return batch.filter((n) => mine.has(n.id));
  }

  private async dueBatch(): Promise<Notice[]> {
    const rows: Array<Record<string, unknown>> = await this.knex('changelog_notices as n')
      .join('changelog_subscriptions as s', 's.id', 'n.subscription_id')
      .leftJoin('changelog_addresses as a', 'a.id', 's.address_id')
      .join('changelog_entries as e', 'e.id', 'n.entry_id')
      .where('n.state', 'pending')
      .andWhere('n.next_attempt_at', '<=', this.clock.now())
      .orderBy('n.id')
      .limit(BATCH)
      .select(
        'n.id',
        'n.channel',
        'n.attempts',
        's.id as subscription_id',
        's.email',
        's.webhook_url',
        'a.unsubscribed_at',
        'e.id as entry_id',
        'e.entry_key',
        'e.title',
        'e.body',
        'e.published_at',
      );
    return rows.map((r) => ({
      id: toInt(r.id),
      channel: r.channel as Notice['channel'],
      attempts: toInt(r.attempts),
      subscriptionId: toInt(r.subscription_id),
      email: String(r.email),
      webhookUrl: r.webhook_url ? String(r.webhook_url) : null,
      unsubscribed: r.unsubscribed_at !== null,
      entryId: toInt(r.entry_id),
      key: String(r.entry_key),
      title: String(r.title),
      body: String(r.body),
      publishedAt: toIsoRequired(r.published_at),
    }));
  }

  private async handle(notice: Notice): Promise<'sent' | 'retried' | 'failed' | 'dropped'> {
    const now = this.clock.now();
    const row = this.knex('changelog_notices').where({ id: notice.id, state: 'pending' });
    if (notice.unsubscribed || (notice.channel === 'webhook' && !notice.webhookUrl)) {
      await row.clone().update({ state: 'dropped' });
      return 'dropped';
    }
    const error = notice.channel === 'email' ? await this.mail(notice) : await this.post(notice);
    if (!error) {
      await row.clone().update({ state: 'sent', sent_at: now, attempts: notice.attempts + 1, last_error: null });
      return 'sent';
    }
    const attempts = notice.attempts + 1;
    const failed = attempts >= NOTICE_TRIES;
    await row.clone().update({
      state: failed ? 'failed' : 'pending',
      attempts,
      last_error: error.slice(0, 255),
      next_attempt_at: new Date(now.getTime() + retryDelayMs(60_000, 6 * 3_600_000, attempts)),
    });
    return failed ? 'failed' : 'retried';
  }

  private async mail(notice: Notice): Promise<string | null> {
    const link = await this.unsubscribes.link(notice.subscriptionId);
    try {
      await this.mailer.send({
        from: noReplyAddress(this.config.publicUrl),
        to: notice.email,
        subject: notice.title,
        headers: { 'List-Unsubscribe': `<${link}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
        text: `${notice.body}\n\n--\nYou get this because you subscribed to our API changelog. Unsubscribe: ${link}\n`,
        html:
          `<h1>${escapeHtml(notice.title)}</h1><div style="white-space:pre-wrap">${escapeHtml(notice.body)}</div>` +
          `<p style="font-size:small">You get this because you subscribed to our API changelog. ` +
          `<a href="${escapeHtml(link)}">Unsubscribe</a></p>`,
      });
      return null;
    } catch (err) {
      return (err as Error).message;
    }
  }

  private async post(notice: Notice): Promise<string | null> {
    const id = `changelog-${notice.entryId}-${notice.subscriptionId}`;
    const body = JSON.stringify({
      id,
      event: 'changelog.published',
      occurred_at: notice.publishedAt,
      data: { key: notice.key, title: notice.title, body: notice.body, published_at: notice.publishedAt },
    });
    const key = await this.secrets.keyOf(notice.subscriptionId);
    const outcome = await postSigned(
      notice.webhookUrl!,
      { key, id, body, at: this.clock.now() },
      { guard: this.guard, timeoutMs: TIMEOUT_MS },
    );
    if (outcome.error) return outcome.error;
    return outcome.status! >= 200 && outcome.status! < 300 ? null : `the receiver answered ${outcome.status}`;
  }
}
