import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import { Clock, Locks, OutboundGuard, SecretBox, SERVICES, toBool, toDate, toInt, toText } from '@switchboard/core';
import { keyOfSecret } from '../shared/standard-webhooks';
import { postSigned, PostOutcome } from '../shared/webhook-poster';
import { WEBHOOK_OPTIONS, WebhookOptions } from './options';
import { WebhookOutcomes, Tried } from './outcomes';
import { WebhookWake } from './wake';
import { claimDue, keepLock } from '../shared/leased-rows';
import { PARKED, parkPending } from './pending';

const LOCK = 'campaign.webhook-deliveries';
const LOCK_MS = 15_000;
/** A try ends within its time limit; its outcome is written moments later. */
const LEASE_MARGIN_MS = 5_000;
/** While tries are in flight, deliveries that came due meanwhile are looked for this often. */
const LOOK_AGAIN_MS = 250;

/** The receiver answered (any status: a quick 5xx holds a place no longer than a 2xx); no answer is a hang or no connection. */
const isAnswered = (tried: Tried) => tried.outcome.status !== null;

interface Due {
  id: number;
  webhookId: number;
  eventId: string;
  body: string;
  attempts: number;
  url: string;
  secret: string;
}

/**
 * Delivers due webhook deliveries, one run at a time across processes (a lock), keeping up to
 * `concurrency` POSTs in flight. Taking a delivery moves its due time past its try (a lease): a worker
 * killed mid-try leaves it to be tried again after the lease, so delivery is at least once, with the
 * same `webhook-id`. What each try ended in is written in bulk (outcomes.ts).
 */
@injectable()
export class WebhookDispatcher {
  /** Subscriptions whose latest try in this process was answered: they may have every place in flight. */
  private readonly answering = new Set<number>();

  constructor(
    @inject(SERVICES.Knex) private readonly knex: Knex,
    @inject(SERVICES.Clock) private readonly clock: Clock,
    @inject(SERVICES.Locks) private readonly locks: Locks,
    @inject(SERVICES.SecretBox) private readonly secrets: SecretBox,
    @inject(SERVICES.OutboundGuard) private readonly guard: OutboundGuard,
    @inject(WEBHOOK_OPTIONS) private readonly options: WebhookOptions,
    @inject(WebhookOutcomes) private readonly outcomes: WebhookOutcomes,
    @inject(WebhookWake) private readonly wake: WebhookWake,
  ) {}

  /** Whether a delivery is due now. */
  async due(): Promise<boolean> {
    return Boolean(await this.dueQuery(1).first('id'));
  }

  /**
   * Delivers until nothing is due; the number of tries (null: another process runs). The lock is
   * extended on a timer; once it is lost, no more is taken (another run may have the lock by then).
   */
  async run(): Promise<number | null> {
    const lock = await this.locks.acquire(LOCK, LOCK_MS);
    if (!lock) {
      // That run may be finishing: look again soon, so a wake that came meanwhile is not lost.
      await this.wake.later(1_000, 'lock');
      return null;
    }
    const kept = keepLock(lock, LOCK_MS);
    let tries = 0;
    const inFlight = new Set<Promise<void>>();
    const perWebhook = new Map<number, number>();
    const finished: Tried[] = [];
    const keys = new Map<string, Buffer>();
    const quarter = this.options.concurrency / 4;
    let lookAgain: Promise<void> | null = null;
    try {
      for (;;) {
        // Take more once a quarter of the places are free: a read per few tries, not per try.
        const room = this.options.concurrency - inFlight.size;
        if (kept.held() && (!inFlight.size || room >= quarter)) {
          await this.outcomes.write(finished.splice(0));
          for (const due of await this.takeFairly(room, perWebhook)) {
            tries++;
            perWebhook.set(due.webhookId, (perWebhook.get(due.webhookId) ?? 0) + 1);
            const attempt: Promise<void> = this.attempt(due, keys).then((tried) => {
              finished.push(tried);
              inFlight.delete(attempt);
              perWebhook.set(due.webhookId, perWebhook.get(due.webhookId)! - 1);
              if (isAnswered(tried)) this.answering.add(due.webhookId);
              else this.answering.delete(due.webhookId);
            });
            inFlight.add(attempt);
          }
        }
        if (!inFlight.size) break;
        // Tries that hang hold their places up to the time limit: with places free, deliveries that came
        // due meanwhile (another subscription's) are looked for again soon rather than after those tries.
        const waits: Array<Promise<void>> = [...inFlight];
        if (this.options.concurrency - inFlight.size >= quarter)
          waits.push(
            (lookAgain ??= new Promise<void>((resolve) =>
              setTimeout(() => {
                lookAgain = null;
                resolve();
              }, LOOK_AGAIN_MS),
            )),
          );
        await Promise.race(waits);
      }
      await this.outcomes.write(finished.splice(0));
      await this.wakeForNextRetry();
      return tries;
    } finally {
      kept.stop();
      await Promise.allSettled(inFlight);
      await this.outcomes.write(finished.splice(0)).catch(() => undefined);
      await lock.release();
    }
  }

  /**
   * Due deliveries by the due index alone (no join: it would let the planner sort every pending row). An
   * inactive subscription's deliveries are parked far ahead; one that became due anyway is parked here.
   */
  private dueQuery(limit: number) {
    return this.knex('webhook_deliveries')
      .where('state', 'pending')
      .andWhere('next_attempt_at', '<=', this.clock.now())
      .orderBy('next_attempt_at')
      .orderBy('id')
      .limit(limit);
  }

  /**
   * Places a subscription may hold: all of them once its receiver answers, a quarter until it does (a new
   * one, or one whose last try got no answer), so that a receiver that hangs cannot hold every place
   * for its time limit while other subscriptions' deliveries wait.
   */
  private placesOf(webhookId: number): number {
    return this.answering.has(webhookId)
      ? this.options.concurrency
      : Math.max(1, Math.floor(this.options.concurrency / 4));
  }

  /** Up to `room` due deliveries, none beyond its subscription's places; those left over stay due. */
  private async takeFairly(room: number, perWebhook: Map<number, number>): Promise<Due[]> {
    const taken: Due[] = [];
    const count = new Map(perWebhook);
    const full = () => [...count].filter(([id, n]) => n >= this.placesOf(id)).map(([id]) => id);
    // Each pass leaves out the subscriptions with no place left; a pass that left nothing over ends it.
    for (let pass = 0; pass < 4 && taken.length < room; pass++) {
      const rows = await this.dueRows(room - taken.length, full());
      const fitting = rows.filter((r) => {
        const n = count.get(r.webhookId) ?? 0;
        if (n >= this.placesOf(r.webhookId)) return false;
        count.set(r.webhookId, n + 1);
        return true;
      });
      taken.push(...(await this.claim(fitting)));
      if (fitting.length === rows.length) break;
    }
    return taken;
  }

  /** Up to `room` due deliveries of active subscriptions not in `excluded`, not claimed yet. */
  private async dueRows(room: number, excluded: number[]): Promise<Due[]> {
    const query = this.dueQuery(room);
    if (excluded.length) query.whereNotIn('webhook_id', excluded);
    const rows: Array<Record<string, unknown>> = await query.select('id', 'webhook_id', 'event_id', 'body', 'attempts');
    if (!rows.length) return [];
    const hooks = new Map<number, Record<string, unknown>>(
      (
        await this.knex('webhooks')
          .whereIn('id', [...new Set(rows.map((r) => toInt(r.webhook_id)))])
          .select('id', 'url', 'secret', 'active')
      ).map((h: Record<string, unknown>) => [toInt(h.id), h]),
    );
    for (const [id, hook] of hooks) if (!toBool(hook.active)) await parkPending(this.knex, id);
    const active = rows.filter((r) => toBool(hooks.get(toInt(r.webhook_id))?.active));
    if (!active.length) return this.dueRows(room, excluded);
    return active.map((r) => {
      const hook = hooks.get(toInt(r.webhook_id))!;
      return {
        id: toInt(r.id),
        webhookId: toInt(r.webhook_id),
        eventId: toText(r.event_id),
        body: toText(r.body),
        attempts: toInt(r.attempts),
        url: toText(hook.url),
        secret: toText(hook.secret),
      };
    });
  }

  /** Their due time moved past the try they are taken for; those another run claimed first are left out. */
  private async claim(rows: Due[]): Promise<Due[]> {
    if (!rows.length) return [];
    const leaseMs = LEASE_MARGIN_MS + 2 * this.options.timeoutMs;
    const ids = rows.map((r) => r.id);
    const mine = await claimDue(this.knex, 'webhook_deliveries', ids, this.clock.now(), leaseMs);
    return rows.filter((r) => mine.has(r.id));
  }

  /** A try always ends in an outcome: one delivery that cannot be tried never stops the others. */
  private async attempt(due: Due, keys: Map<string, Buffer>): Promise<Tried> {
    let outcome: PostOutcome;
    try {
      // By the sealed text: a secret changed meanwhile is another entry.
      let key = keys.get(due.secret);
      if (!key) keys.set(due.secret, (key = keyOfSecret(this.secrets.open(due.secret))));
      outcome = await this.post(due.url, key, due.eventId, due.body);
    } catch (err) {
      // Only opening the secret throws: postSigned answers every failure as an outcome.
      const reason = (err as Error).message;
      const error = `the secret cannot be opened (was APP_KEY changed?): ${reason}`.slice(0, 255);
      outcome = { status: null, error, latencyMs: 0 };
    }
    return { id: due.id, webhookId: due.webhookId, attempts: due.attempts + 1, outcome, at: this.clock.now() };
  }

  /** One signed POST of a delivery, within the configured time limit. */
  post(url: string, key: Buffer, id: string, body: string): Promise<PostOutcome> {
    return postSigned(
      url,
      { key, id, body, at: this.clock.now() },
      { guard: this.guard, timeoutMs: this.options.timeoutMs },
    );
  }

  /** A retry due within the next minutes gets a wake of its own; later ones, the scheduler's. */
  private async wakeForNextRetry(): Promise<void> {
    const next = await this.knex('webhook_deliveries')
      .where('state', 'pending')
      .andWhere('next_attempt_at', '<', PARKED)
      .orderBy('next_attempt_at')
      .first('next_attempt_at');
    if (!next) return;
    const wait = toDate(next.next_attempt_at)!.getTime() - this.clock.now().getTime();
    if (wait < 5 * 60_000) await this.wake.later(wait, `at-${Math.ceil((Date.now() + wait) / 1000)}`);
  }
}
