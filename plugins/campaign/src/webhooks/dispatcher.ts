import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import {
  Clock,
  Locks,
  OutboundGuard,
  SchemaGate,
  SecretBox,
  SERVICES,
  toBool,
  toDate,
  toInt,
  toText,
} from '@switchboard/core';
import { keyOfSecret } from '../shared/standard-webhooks';
import { postSigned, PostOutcome } from '../shared/webhook-poster';
import { WEBHOOK_OPTIONS, WebhookOptions } from './options';
import { WebhookOutcomes, Tried } from './outcomes';
import { WebhookWake } from './wake';
import { claimDue, keepLock } from '../shared/leased-rows';
import { PARKED, parkPending } from './pending';
import { Due, Places } from './places';

const LOCK = 'campaign.webhook-deliveries';
const LOCK_MS = 15_000;
/**
 * A claimed delivery waits for a place at most the time limit (places.ts), its try ends within the time
 * limit, and its outcome is written moments later: the lease is twice the limit and this margin.
 */
const LEASE_MARGIN_MS = 5_000;
/** While tries are in flight, deliveries that came due meanwhile are looked for this often. */
const LOOK_AGAIN_MS = 250;

/** The receiver answered (any status: a quick 5xx holds a place no longer than a 2xx); no answer is a hang or no connection. */
const isAnswered = (tried: Tried) => tried.outcome.status !== null;

/**
 * Delivers due webhook deliveries, one run at a time across processes (a lock), keeping up to
 * `concurrency` POSTs in flight. Taking a delivery moves its due time past its try (a lease): a worker
 * killed mid-try leaves it to be tried again after the lease, so delivery is at least once, with the
 * same `webhook-id`. Deliveries are claimed ahead, up to CLAIMED_PER_PLACE per place (places.ts),
 * and what each try ended in is written in bulk (outcomes.ts): a statement per many tries.
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
    @inject(SERVICES.SchemaGate) private readonly schema: SchemaGate,
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
    const places = new Places(
      this.options.concurrency,
      (id) => this.placesOf(id),
      (id) => this.answering.has(id),
      this.options.timeoutMs,
    );
    const finished: Tried[] = [];
    const notFailing = new Set<number>();
    const keys = new Map<string, Buffer>();
    const quarter = this.options.concurrency / 4;
    // The loop sleeps until a try ends, a write ends or it is time to look again: one waker, not a
    // Promise.race over every try in flight (64 reactions added per wake, 1.3M per 20,000 tries).
    let wakeLoop: (() => void) | null = null;
    const wake = () => {
      const resume = wakeLoop;
      wakeLoop = null;
      resume?.();
    };
    let lookAgain: ReturnType<typeof setTimeout> | null = null;
    // What tries ended in is written one statement (or transaction) at a time, beside the claims: a
    // claim never waits for a write, nor a write for a claim.
    let writing: Promise<void> | null = null;
    const failed: { write: { error: unknown } | null } = { write: null };
    let beingWritten = 0;
    const writeEnded = () => {
      if (writing || !finished.length) return;
      const ended = finished.splice(0);
      beingWritten = ended.length;
      writing = this.outcomes
        .write(ended, notFailing)
        .catch((error: unknown) => void (failed.write ??= { error }))
        .finally(() => {
          writing = null;
          beingWritten = 0;
          wake();
        });
    };
    const written = async () => {
      while (writing) await writing;
      if (failed.write) throw failed.write.error;
    };
    const startWaiting = () => {
      for (let due: Due | null; kept.held() && (due = places.start(this.clock.now().getTime()));) {
        const { webhookId } = due;
        tries++;
        const attempt: Promise<void> = this.attempt(due, keys).then((tried) => {
          finished.push(tried);
          inFlight.delete(attempt);
          places.ended(webhookId);
          if (isAnswered(tried)) this.answering.add(webhookId);
          else this.answering.delete(webhookId);
          startWaiting();
          wake();
        });
        inFlight.add(attempt);
      }
    };
    try {
      for (;;) {
        if (failed.write) throw failed.write.error;
        // A schema rolled back under this worker: no more is taken, and the run ends with its tries, letting
        // the lock go (the next run's job waits for the schema before it takes the lock: SchemaGate).
        const current = await this.schema.isOpen();
        // Claim more once a place's worth of the claimed-ahead room is free (a statement per many tries);
        // write what tries ended in once half the places have ended (and with each claim).
        if (kept.held() && current && (!places.held || places.room() >= this.options.concurrency)) {
          // What a killed worker sent and had not written is sent again: a claim waits while a places'
          // worth is unwritten, so that stays below (CLAIMED_PER_PLACE + 1) x places (decisions.md).
          while (finished.length + beingWritten >= this.options.concurrency) {
            writeEnded();
            await written();
          }
          writeEnded();
          await this.takeFairly(places);
          startWaiting();
        }
        if (finished.length >= this.options.concurrency / 2) writeEnded();
        // Claimed and not started yet: their claims lapse and a run on the schema they need tries them.
        if (!current) places.dropWaiting();
        if (!kept.held()) {
          // Another run may have the lock by now: what it writes is not known here.
          places.dropWaiting();
          await written();
          notFailing.clear();
        }
        if (!places.held) break;
        // Tries that hang hold their places up to the time limit: with places free, deliveries that came
        // due meanwhile (another subscription's) are looked for again soon rather than after those tries.
        if (this.options.concurrency - places.inFlight >= quarter)
          lookAgain ??= setTimeout(() => {
            lookAgain = null;
            wake();
          }, LOOK_AGAIN_MS);
        await new Promise<void>((resolve) => (wakeLoop = resolve));
      }
      await written();
      await this.outcomes.write(finished.splice(0), notFailing);
      await this.wakeForNextRetry();
      return tries;
    } finally {
      if (lookAgain) clearTimeout(lookAgain);
      kept.stop();
      places.dropWaiting();
      await Promise.allSettled(inFlight);
      await written().catch(() => undefined);
      await this.outcomes.write(finished.splice(0), notFailing).catch(() => undefined);
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

  /** Claims due deliveries into the run's room, none beyond its subscription's; those left over stay due. */
  private async takeFairly(places: Places): Promise<void> {
    // Each pass leaves out the subscriptions with no room left; a pass that left nothing over ends it.
    for (let pass = 0; pass < 4 && places.room() > 0; pass++) {
      const rows = await this.dueRows(places.room(), places.full());
      const roomOf = new Map<number, number>();
      const fitting = rows.filter((r) => {
        const left = roomOf.get(r.webhookId) ?? places.roomOf(r.webhookId);
        roomOf.set(r.webhookId, left - 1);
        return left > 0;
      });
      places.claimed(await this.claim(fitting), this.clock.now().getTime());
      if (fitting.length === rows.length) break;
    }
  }

  /**
   * Up to `room` due deliveries of active subscriptions not in `excluded`, not claimed yet, with their
   * subscription's address and secret: the due index picks them (a derived table, so that the join
   * does not make the planner sort every pending row), then a join by key adds the subscription.
   */
  private async dueRows(room: number, excluded: number[]): Promise<Due[]> {
    const due = this.dueQuery(room).select('id', 'webhook_id', 'event_id', 'body', 'attempts', 'next_attempt_at');
    if (excluded.length) due.whereNotIn('webhook_id', excluded);
    const rows: Array<Record<string, unknown>> = await this.knex
      .from(due.as('due'))
      .join('webhooks as w', 'w.id', 'due.webhook_id')
      .orderBy('due.next_attempt_at')
      .orderBy('due.id')
      .select('due.id', 'due.webhook_id', 'due.event_id', 'due.body', 'due.attempts', 'w.url', 'w.secret', 'w.active');
    if (!rows.length) return [];
    const inactive = new Set(rows.filter((r) => !toBool(r.active)).map((r) => toInt(r.webhook_id)));
    if (inactive.size) await parkPending(this.knex, [...inactive]);
    const active = rows.filter((r) => !inactive.has(toInt(r.webhook_id)));
    if (!active.length) return this.dueRows(room, excluded);
    return active.map((r) => ({
      id: toInt(r.id),
      webhookId: toInt(r.webhook_id),
      eventId: toText(r.event_id),
      body: toText(r.body),
      attempts: toInt(r.attempts),
      url: toText(r.url),
      secret: toText(r.secret),
    }));
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
