import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import { placeholders, SERVICES, transactionWithRetry, writeText } from '@switchboard/core';
import { PostOutcome, retryDelayMs } from '../shared/webhook-poster';
import { WEBHOOK_OPTIONS, WebhookOptions } from './options';
import { parkPending } from './pending';

/** One finished try of a delivery. */
export interface Tried {
  id: number;
  webhookId: number;
  /** Tries made, this one included. */
  attempts: number;
  outcome: PostOutcome;
  at: Date;
}

type Verdict = 'delivered' | 'retry' | 'failed';

/**
 * A 2xx delivers; a 429, a 5xx or no answer is tried again; any other answer, or an address the outbound
 * guard refuses, fails for good.
 */
export function verdictOf(tried: Tried, maxAttempts: number): Verdict {
  const { status, refused } = tried.outcome;
  if (status !== null && status >= 200 && status < 300) return 'delivered';
  const retriable = !refused && (status === null || status === 429 || status >= 500);
  return retriable && tried.attempts < maxAttempts ? 'retry' : 'failed';
}

const errorOf = (tried: Tried): string | null =>
  (
    tried.outcome.error ??
    (tried.outcome.status !== null && (tried.outcome.status < 200 || tried.outcome.status >= 300)
      ? `the receiver answered ${tried.outcome.status}`
      : null)
  )?.slice(0, 255) ?? null;

const sameValue = (a: Knex.RawBinding, b: Knex.RawBinding) =>
  a instanceof Date && b instanceof Date ? a.getTime() === b.getTime() : a === b;

interface FailureRun {
  failures: number;
  reset: boolean;
  firstFailure: Date | null;
  last: Tried;
}

/** Each subscription's run of failures, in the order of the tries: a success ends it, failures after it start a new one. */
function failureRuns(all: Tried[]): Map<number, FailureRun> {
  const runs = new Map<number, FailureRun>();
  for (const t of all) {
    const run = runs.get(t.webhookId) ?? { failures: 0, reset: false, firstFailure: null, last: t };
    if (verdictOf(t, Infinity) === 'delivered') Object.assign(run, { failures: 0, reset: true, firstFailure: null });
    else {
      run.failures++;
      run.firstFailure ??= t.at;
    }
    run.last = t;
    runs.set(t.webhookId, run);
  }
  return runs;
}

/**
 * Writes what tries ended in, a statement per verdict for all of them, and follows each subscription's
 * run of failures: a success ends it; one failing `disableAfterFailures` tries in a row over at least
 * `disableAfterMs` is deactivated with the reason, its pending deliveries parked until it is activated.
 */
@injectable()
export class WebhookOutcomes {
  constructor(
    @inject(SERVICES.Knex) private readonly knex: Knex,
    @inject(WEBHOOK_OPTIONS) private readonly options: WebhookOptions,
  ) {}

  /**
   * `notFailing`: subscriptions known (to this run, which alone writes outcomes while it holds the lock)
   * to have no run of failures; kept up to date here. A batch of successes of those alone is one
   * statement, with no transaction.
   */
  async write(all: Tried[], notFailing = new Set<number>()): Promise<void> {
    if (!all.length) return;
    const byVerdict = new Map<Verdict, Tried[]>();
    for (const t of all) {
      const verdict = verdictOf(t, this.options.maxAttempts);
      (byVerdict.get(verdict) ?? byVerdict.set(verdict, []).get(verdict)!).push(t);
    }
    const runs = failureRuns(all);
    const untouched = [...runs].every(([id, run]) => !run.failures && notFailing.has(id));
    if (untouched && byVerdict.size === 1) {
      const [[verdict, these]] = byVerdict;
      await this.record(this.knex, verdict, these);
      return;
    }
    await transactionWithRetry(this.knex, async (trx) => {
      for (const [verdict, these] of byVerdict) await this.record(trx, verdict, these);
      const retried = byVerdict.get('retry');
      if (retried)
        await parkPending(
          trx,
          [...new Set(retried.map((t) => t.webhookId))],
          retried.map((t) => t.id),
        );
      await this.followFailures(trx, runs, notFailing);
    });
    for (const [id, run] of runs) {
      if (run.failures) notFailing.delete(id);
      else notFailing.add(id);
    }
  }

  private async record(trx: Knex | Knex.Transaction, verdict: Verdict, these: Tried[]): Promise<void> {
    // The statement's text with placeholders (knex's builder compiled every value: a sixth of the database
    // client's time). A value all of them share (a status, the first try) is written as it is, not as a
    // CASE per row.
    const bindings: Knex.RawBinding[] = [];
    const set = (column: string, value: (t: Tried) => Knex.RawBinding) => {
      const values = these.map(value);
      if (values.every((v) => sameValue(v, values[0]))) {
        bindings.push(values[0]);
        return `\`${column}\` = ?`;
      }
      for (let i = 0; i < these.length; i++) bindings.push(these[i].id, values[i]);
      return `\`${column}\` = case \`id\`${' when ? then ?'.repeat(these.length)} end`;
    };
    const finished = verdict !== 'retry';
    const columns = [
      set('state', () => (finished ? verdict : 'pending')),
      set('attempts', (t) => t.attempts),
      set('response_status', (t) => t.outcome.status),
      set('latency_ms', (t) => t.outcome.latencyMs),
      set('last_error', (t) => (verdict === 'delivered' ? null : errorOf(t))),
      finished
        ? set('finished_at', (t) => t.at)
        : set(
            'next_attempt_at',
            (t) =>
              new Date(t.at.getTime() + retryDelayMs(this.options.retryBaseMs, this.options.retryMaxMs, t.attempts)),
          ),
    ];
    for (const t of these) bindings.push(t.id);
    await writeText(
      trx,
      `update \`webhook_deliveries\` set ${columns.join(', ')} ` +
        `where \`id\` in (${placeholders(these.length)}) and \`state\` = 'pending'`,
      bindings,
    );
  }

  /**
   * Each subscription's run of failures, as `failureRuns` counted them. Nothing is written for a
   * subscription that was not failing (as read, or as `notFailing` knows) and still is not.
   */
  private async followFailures(trx: Knex.Transaction, runs: Map<number, FailureRun>, notFailing: Set<number>) {
    const unknown = [...runs.keys()].filter((id) => !notFailing.has(id));
    const failing = new Set<number>(
      unknown.length
        ? (await trx('webhooks').whereIn('id', unknown).andWhere('failures_in_row', '>', 0).pluck('id')).map(Number)
        : [],
    );
    // In id order, so concurrent writers take the rows in one order.
    for (const [webhookId, run] of [...runs].sort(([a], [b]) => a - b)) {
      if (!run.failures) {
        if (failing.has(webhookId))
          await trx('webhooks').where({ id: webhookId }).update({ failures_in_row: 0, failing_since: null });
        continue;
      }
      await trx('webhooks')
        .where({ id: webhookId })
        .update(
          run.reset
            ? { failures_in_row: run.failures, failing_since: run.firstFailure }
            : {
                failures_in_row: trx.raw('failures_in_row + ?', [run.failures]),
                failing_since: trx.raw('COALESCE(failing_since, ?)', [run.firstFailure]),
              },
        );
      const since = new Date(run.last.at.getTime() - this.options.disableAfterMs);
      const reason =
        `deactivated ${run.last.at.toISOString()}: every try failed since the failures began ` +
        `(last: ${errorOf(run.last) ?? 'no answer'})`;
      const deactivated = await trx('webhooks')
        .where({ id: webhookId, active: true })
        .andWhere('failures_in_row', '>=', this.options.disableAfterFailures)
        .andWhere('failing_since', '<=', since)
        .update({ active: false, disabled_reason: reason.slice(0, 255), updated_at: run.last.at });
      if (deactivated) await parkPending(trx, [webhookId]);
    }
  }
}
