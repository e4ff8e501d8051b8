import crypto from 'node:crypto';
import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import {
  Clock,
  dialectOfKnex,
  GroupCommit,
  rowPlaceholders,
  SERVICES,
  toDate,
  toInt,
  transactionWithRetry,
  writeText,
} from '@switchboard/core';
import { jsonText } from '@switchboard/provider-kit';
import type { EventType, NormalizedEvent } from '@switchboard/provider-kit';
import { ensureStatusCountRows } from '../audience/subscribers';
import { MailEvent, MailEventLedger } from '../mail-events';
import { EventLinker } from './event-linker';
import { InboundWebhooksService, ReceivingEndpoint } from './inbound-webhooks/service';

const INSERT_CHUNK = 500;

interface RecordedEvent {
  organization_id: unknown;
  provider: string;
  provider_event_id: string;
  message_id: unknown;
  subscriber_id: unknown;
  event_type: string;
  bounce: unknown;
  recipient: unknown;
  event_at: unknown;
}

const EVENT_COLUMNS = [
  'organization_id',
  'webhook_endpoint_id',
  'provider',
  'provider_event_id',
  'message_id',
  'subscriber_id',
  'recipient',
  'event_type',
  'bounce',
  'provider_message_id',
  'payload',
  'event_at',
  'received_at',
  'receipt',
] as const;
type EventRow = Record<(typeof EVENT_COLUMNS)[number], unknown> & {
  organization_id: number;
  provider: string;
  provider_event_id: string;
  event_type: string;
};

/** MariaDB's INSERT IGNORE of `count` event rows, with placeholders. */
const insertIgnoreEvents = (count: number) =>
  `insert ignore into \`inbound_events\` (${EVENT_COLUMNS.map((c) => `\`${c}\``).join(', ')}) values ` +
  rowPlaceholders(count, EVENT_COLUMNS.length);

/**
 * A provider's event id as its key column holds it (191 characters): a longer one keeps its start and a
 * digest of the whole, so two ids that share their first 191 characters stay two events.
 */
function storedEventId(id: string): string {
  if (id.length <= 191) return id;
  return `${id.slice(0, 126)}~${crypto.createHash('sha256').update(id).digest('hex')}`;
}

const eventKey = (e: { organization_id: unknown; provider: string; provider_event_id: string }) =>
  `${toInt(e.organization_id)}\u0000${e.provider}\u0000${e.provider_event_id}`;

/** A verified request's events, as the receiving route hands them over. */
interface Submission {
  endpoint: ReceivingEndpoint;
  provider: string;
  events: NormalizedEvent[];
  /** Each event's provider payload as stored, written while the request is answered alone. */
  payloads: string[];
}

interface Receipt {
  received: number;
  recorded: number;
  /** Nothing recorded: the endpoint changed since the request was verified with it (read it again). */
  stale?: boolean;
}

/** Events of one run, at most: a request heavier than that runs alone. */
const RUN_EVENTS = 1_000;
/**
 * Runs in flight at once per process: two, the second only once as many events wait as the run in flight
 * carries (GroupCommit's evenRuns). One run at a time (sessions 20-21) left every client waiting on that
 * run while the serve thread and MariaDB took turns: at 16 clients a run of 15 requests, then a run of the
 * 1 that came meanwhile. Two runs started as soon as a place was free (sessions 18-19) cut the requests
 * each run's ~9 statements served by ~40 %. Even runs keep runs as full and overlap them (docs/performance-history.md,
 * ingest, session 22). Runs of other processes, or the two of this one, may meet each other's row locks in
 * another order: a deadlock is run again (transactionWithRetry).
 */
const RUNS_AT_ONCE = 2;

/**
 * Records verified requests' events and applies them (campaign spec §6): each event is written once
 * per (organization, provider, provider event id) with the message and subscriber it is linked to, and
 * only the events a run wrote change counters and statuses, so a provider's retry changes nothing.
 * Requests arriving together are recorded together, one transaction for all (core GroupCommit): the
 * request is answered once its events are committed.
 */
@injectable()
export class InboundEventRecorder {
  private readonly runs = new GroupCommit<Submission, Receipt>((batch) => this.recordTogether(batch), {
    maxWeight: RUN_EVENTS,
    concurrency: RUNS_AT_ONCE,
    weight: (s) => s.events.length,
    evenRuns: true,
  });

  constructor(
    @inject(SERVICES.Knex) private readonly knex: Knex,
    @inject(SERVICES.Clock) private readonly clock: Clock,
    @inject(EventLinker) private readonly linker: EventLinker,
    @inject(MailEventLedger) private readonly ledger: MailEventLedger,
    @inject(InboundWebhooksService) private readonly endpoints: InboundWebhooksService,
  ) {}

  async record(endpoint: ReceivingEndpoint, provider: string, events: NormalizedEvent[]): Promise<Receipt> {
    if (!events.length) return { received: 0, recorded: 0 };
    // Written here, not in the run: a payload too deeply nested to write is this request's 400 alone.
    const payloads = events.map((e) => jsonText(e.raw ?? null));
    return this.runs.submit({ endpoint, provider, events, payloads });
  }

  /** The run's requests verified with their endpoint as it is now are recorded; the others are stale. */
  private async recordTogether(batch: Submission[]): Promise<Receipt[]> {
    const current = await this.endpoints.unchanged(batch.map((s) => s.endpoint));
    const kept = batch.filter((s) => current(s.endpoint));
    const receipts = kept.length ? await this.recordCurrent(kept) : [];
    return batch.map((s) =>
      current(s.endpoint) ? receipts.shift()! : { received: s.events.length, recorded: 0, stale: true },
    );
  }

  private async recordCurrent(batch: Submission[]): Promise<Receipt[]> {
    // Which submission each event came from: the events are flattened in order.
    const owner = batch.flatMap((s, k) => s.events.map(() => k));
    const payloads = batch.flatMap((s) => s.payloads);
    const linked = await this.linker.link(
      batch.flatMap((s) => s.events.map((event) => ({ organizationId: s.endpoint.organizationId, event }))),
    );
    const receipt = crypto.randomBytes(12).toString('hex');
    const now = this.clock.now();
    const rows = linked.map(({ organizationId, event: e }, i): EventRow => ({
      organization_id: organizationId,
      webhook_endpoint_id: batch[owner[i]].endpoint.id,
      provider: batch[owner[i]].provider,
      provider_event_id: storedEventId(e.providerEventId),
      message_id: e.messageId,
      subscriber_id: e.subscriberId,
      recipient: e.recipient?.slice(0, 191) ?? null,
      event_type: e.type,
      bounce: e.bounce ?? null,
      provider_message_id: e.providerMessageId?.slice(0, 191) ?? null,
      payload: payloads[i],
      event_at: storableTime(e.occurredAt, now),
      received_at: now,
      receipt,
    }));
    for (const orgId of new Set(batch.map((s) => s.endpoint.organizationId)))
      await ensureStatusCountRows(this.knex, orgId);
    const recorded = await transactionWithRetry(this.knex, async (trx) => {
      const inserted = await this.insertNew(trx, rows);
      // Every row new (no retry nor repeat among them): they are the run's as they are, without reading them back.
      const mine = inserted === rows.length ? null : await this.writtenBy(trx, receipt, rows);
      await this.ledger.apply(trx, now, (mine ?? rows).map(asMailEvent));
      return mine;
    });
    // Every row written: each submission recorded all its events.
    if (!recorded) return batch.map((s) => ({ received: s.events.length, recorded: s.events.length }));
    // Each event this run wrote is credited to the first submission that carried it.
    const firstCarrier = new Map<string, number>();
    rows.forEach((row, i) => {
      const key = eventKey(row);
      if (!firstCarrier.has(key)) firstCarrier.set(key, owner[i]);
    });
    const counts = batch.map((s) => ({ received: s.events.length, recorded: 0 }));
    for (const event of recorded) counts[firstCarrier.get(eventKey(event))!].recorded++;
    return counts;
  }

  /** Writes the rows not recorded before; how many were new where the database tells (MariaDB), else null. */
  private async insertNew(trx: Knex.Transaction, rows: EventRow[]): Promise<number | null> {
    const mysql = dialectOfKnex(trx) === 'mysql';
    let inserted = 0;
    for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
      const part = rows.slice(i, i + INSERT_CHUNK);
      if (!mysql) {
        await trx('inbound_events')
          .insert(part)
          .onConflict(['organization_id', 'provider', 'provider_event_id'])
          .ignore();
        continue;
      }
      // The statement's text with placeholders, run by mysql2 itself: knex's builder compiles every row's
      // every value, and its raw binding pass scans them all again (docs/performance-history.md, ingest).
      const values: unknown[] = [];
      for (const row of part) for (const c of EVENT_COLUMNS) values.push(row[c]);
      inserted += await writeText(trx, insertIgnoreEvents(part.length), values);
    }
    return mysql ? inserted : null;
  }

  /** The rows this run wrote (a retried event's row was written before, under another receipt). */
  private async writtenBy(
    trx: Knex.Transaction,
    receipt: string,
    rows: Array<{ organization_id: number; provider: string; provider_event_id: string }>,
  ): Promise<RecordedEvent[]> {
    const groups = new Map<string, { organizationId: number; provider: string; ids: Set<string> }>();
    for (const r of rows) {
      const key = `${r.organization_id}\u0000${r.provider}`;
      const group = groups.get(key) ?? { organizationId: r.organization_id, provider: r.provider, ids: new Set() };
      group.ids.add(r.provider_event_id);
      groups.set(key, group);
    }
    const written: RecordedEvent[] = [];
    for (const { organizationId, provider, ids } of groups.values()) {
      const all = [...ids];
      for (let i = 0; i < all.length; i += INSERT_CHUNK)
        written.push(
          ...((await trx('inbound_events')
            .where({ organization_id: organizationId, provider, receipt })
            .whereIn('provider_event_id', all.slice(i, i + INSERT_CHUNK))
            .select(
              'organization_id',
              'provider',
              'provider_event_id',
              'message_id',
              'subscriber_id',
              'event_type',
              'bounce',
              'recipient',
              'event_at',
            )) as RecordedEvent[]),
        );
    }
    return written;
  }
}

/**
 * An event's time as the events table can hold it (MariaDB's DATETIME: years 1000 to 9999), else the time
 * it was received: an adapter may read any number a provider sends as a time, and a date out of range
 * failed the whole run on MariaDB (docs/decisions.md, Inbound provider webhooks).
 */
function storableTime(at: Date, received: Date): Date {
  const year = at.getUTCFullYear();
  return year >= 1000 && year <= 9999 ? at : received;
}

/** A recorded event as the ledger takes it. */
const asMailEvent = (e: RecordedEvent): MailEvent => ({
  type: e.event_type as EventType,
  organizationId: toInt(e.organization_id),
  messageId: e.message_id === null ? null : toInt(e.message_id),
  subscriberId: e.subscriber_id === null ? null : toInt(e.subscriber_id),
  occurredAt: toDate(e.event_at) ?? new Date(0),
  source: { kind: 'provider', provider: e.provider, providerEventId: e.provider_event_id },
  email: (e.recipient as string | null) ?? null,
  bounce: (e.bounce as 'hard' | 'soft' | null) ?? null,
});
