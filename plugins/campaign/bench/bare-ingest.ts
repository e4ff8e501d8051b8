import crypto from 'node:crypto';
import Koa from 'koa';
import coBody from 'co-body';
import { createKnex, readRawBody } from '@switchboard/core';

/**
 * The ingest benchmark's baselines, as their own process on the benchmark's database:
 * - `/parse`: a bare Koa route that only parses the JSON body;
 * - `/provider_a`, `/provider_c`, `/provider_e`: the fair one. It checks the same signature or Basic
 *   credentials (constant time), parses, and writes the request's events with ONE `INSERT IGNORE` into a
 *   copy of `inbound_events` (same columns and keys): no linking, counters, timelines or envelope.
 *   provider_e's token is not checked against earlier ones (no Redis).
 */
const knex = createKnex(process.env.DATABASE_URL!);
const TABLE = 'bare_inbound_events';
/**
 * The counted baseline's own copies (`/counted/<provider>`), so that the engine's counters stay as it left
 * them: the events, and the organization's messages and subscribers whose counters it adds to.
 */
const COUNTED = { events: 'bare_counted_events', messages: 'bare_messages', subscribers: 'bare_subscribers' };
/** A provider_a event name's message counter and subscriber counter (spec §6; the subscriber's fields). */
const COUNTERS: Record<string, { message: string; subscriber?: string }> = {
  delivered: { message: 'count_delivered' },
  open: { message: 'count_read', subscriber: 'messages_opened' },
  click: { message: 'count_clicked', subscriber: 'messages_clicked' },
};
const ORGANIZATION = Number(process.env.BENCH_ORG_ID);
const SECRETS: Record<string, string> = {
  provider_a: process.env.BENCH_SECRET_A!,
  provider_c: process.env.BENCH_SECRET_C!,
  provider_e: process.env.BENCH_SECRET_E!,
};

const digest = (value: string | Buffer) => crypto.createHash('sha256').update(value).digest();
const same = (a: string, b: string) => crypto.timingSafeEqual(digest(a), digest(b));
const hmac = (key: string, ...parts: Array<string | Buffer>) => {
  const mac = crypto.createHmac('sha256', key);
  for (const part of parts) mac.update(part);
  return mac.digest();
};

type Row = Record<string, unknown>;
const row = (provider: string, id: string, type: string, fields: Record<string, unknown>, raw: unknown): Row => {
  const now = new Date();
  return {
    organization_id: ORGANIZATION,
    webhook_endpoint_id: null,
    provider,
    provider_event_id: id.slice(0, 191),
    message_id: Number(fields.campaign_message_id) || null,
    subscriber_id: Number(fields.campaign_subscriber_id) || null,
    recipient: typeof fields.email === 'string' ? fields.email : null,
    event_type: type,
    bounce: null,
    provider_message_id: null,
    payload: JSON.stringify(raw),
    event_at: now,
    received_at: now,
    receipt: 'bare',
  };
};

/** The request's rows, or null when its signature or credentials do not hold. */
const verifiedRows: Record<string, (ctx: Koa.Context, raw: Buffer) => Row[] | null> = {
  provider_a(ctx, raw) {
    const timestamp = ctx.get('x-twilio-email-event-webhook-timestamp');
    const expected = hmac(SECRETS.provider_a, timestamp, raw).toString('base64');
    if (!same(expected, ctx.get('x-twilio-email-event-webhook-signature'))) return null;
    const events = JSON.parse(raw.toString('utf8')) as Array<Record<string, unknown>>;
    return events.map((e) => row('provider_a', `${String(e.event)}:${String(e.sg_event_id)}`, String(e.event), e, e));
  },
  provider_c(ctx, raw) {
    const [scheme, value] = ctx.get('authorization').split(' ');
    if (scheme !== 'Basic' || !same(Buffer.from(value ?? '', 'base64').toString('utf8'), SECRETS.provider_c))
      return null;
    const record = JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
    const metadata = (record.Metadata ?? {}) as Record<string, unknown>;
    const id = crypto.createHash('sha256').update(JSON.stringify(record)).digest('hex');
    return [row('provider_c', id, 'delivered', { ...metadata, email: record.Recipient }, record)];
  },
  provider_e(ctx, raw) {
    const body = JSON.parse(raw.toString('utf8')) as Record<string, Record<string, unknown>>;
    const { timestamp, token, signature } = body.signature as Record<string, string>;
    if (!same(hmac(SECRETS.provider_e, timestamp, token).toString('hex'), signature)) return null;
    const data = body['event-data'];
    const custom = JSON.parse(String(data['X-Mailin-custom'])) as Record<string, unknown>;
    return [row('provider_e', `${String(data.event)}:${token}`, String(data.event), { ...custom, ...data }, data)];
  },
};

const app = new Koa();
app.use(async (ctx) => {
  if (ctx.method === 'GET') {
    ctx.body = { ok: true };
    return;
  }
  const provider = ctx.path.slice(1);
  if (provider === 'parse') {
    const body = await coBody.json(ctx.req, { limit: '1mb' });
    ctx.body = { received: Array.isArray(body) ? body.length : 1 };
    return;
  }
  const counted = provider.startsWith('counted/');
  const raw = await readRawBody(ctx);
  const rows = verifiedRows[counted ? provider.slice('counted/'.length) : provider]?.(ctx, raw);
  if (!rows) {
    ctx.status = 401;
    return;
  }
  if (counted) await insertAndCount(rows);
  else await knex(TABLE).insert(rows).onConflict(['organization_id', 'provider', 'provider_event_id']).ignore();
  ctx.body = { received: rows.length };
});

/**
 * The spec's writes and nothing else, in one transaction: the rows, each message's counters (one UPDATE
 * per message) and the subscribers' counters of opens and clicks (one UPDATE for all, a CASE per column).
 * Every row counts: the benchmark never repeats an event. No linking, first-open marks, timelines, daily
 * figures, outbound webhooks or ownership checks.
 */
async function insertAndCount(rows: Row[]): Promise<void> {
  const byMessage = new Map<number, Map<string, number>>();
  const bySubscriber = new Map<string, Map<number, number>>();
  for (const r of rows) {
    const counter = COUNTERS[String(r.event_type)];
    if (!counter || r.message_id === null) continue;
    const m =
      byMessage.get(Number(r.message_id)) ?? byMessage.set(Number(r.message_id), new Map()).get(Number(r.message_id))!;
    m.set(counter.message, (m.get(counter.message) ?? 0) + 1);
    if (!counter.subscriber || r.subscriber_id === null) continue;
    const s =
      bySubscriber.get(counter.subscriber) ?? bySubscriber.set(counter.subscriber, new Map()).get(counter.subscriber)!;
    s.set(Number(r.subscriber_id), (s.get(Number(r.subscriber_id)) ?? 0) + 1);
  }
  await knex.transaction(async (trx) => {
    await trx(COUNTED.events).insert(rows).onConflict(['organization_id', 'provider', 'provider_event_id']).ignore();
    for (const [id, columns] of byMessage)
      await trx(COUNTED.messages)
        .where({ id })
        .update(Object.fromEntries([...columns].map(([c, n]) => [c, trx.raw('?? + ?', [c, n])])));
    const ids = [...new Set([...bySubscriber.values()].flatMap((m) => [...m.keys()]))];
    if (!ids.length) return;
    // Each column by how much each id adds: the ids of one amount in one IN list.
    const sets = [...bySubscriber].map(([column, amounts]) => {
      const byAmount = new Map<number, number[]>();
      for (const [id, n] of amounts) (byAmount.get(n) ?? byAmount.set(n, []).get(n)!).push(id);
      const cases = [...byAmount].map(([n, list]) => ({
        sql: `when ?? in (${list.map(() => '?').join(', ')}) then ?`,
        bindings: ['id', ...list, n],
      }));
      return [
        column,
        trx.raw(`?? + case ${cases.map((c) => c.sql).join(' ')} else 0 end`, [
          column,
          ...cases.flatMap((c) => c.bindings),
        ]),
      ];
    });
    await trx(COUNTED.subscribers).whereIn('id', ids).update(Object.fromEntries(sets));
  });
}

void (async () => {
  await knex.raw('CREATE TABLE IF NOT EXISTS ?? LIKE inbound_events', [TABLE]);
  await knex.raw('CREATE TABLE IF NOT EXISTS ?? LIKE inbound_events', [COUNTED.events]);
  for (const table of ['messages', 'subscribers'] as const) {
    await knex.raw('CREATE TABLE IF NOT EXISTS ?? LIKE ??', [COUNTED[table], table]);
    // The subscribers' opened and clicked counters as the engine kept them before 1.15, on their wide rows:
    // this baseline stays the one earlier sessions measured against.
    if (table === 'subscribers' && !(await knex.schema.hasColumn(COUNTED.subscribers, 'messages_opened')))
      await knex.schema.alterTable(COUNTED.subscribers, (t) => {
        t.integer('messages_opened').unsigned().notNullable().defaultTo(0);
        t.integer('messages_clicked').unsigned().notNullable().defaultTo(0);
      });
    const columns = Object.keys(await knex(table).columnInfo());
    const list = columns.map(() => '??').join(', ');
    await knex.raw(`INSERT IGNORE INTO ?? (${list}) SELECT ${list} FROM ?? WHERE organization_id = ?`, [
      COUNTED[table],
      ...columns,
      ...columns,
      table,
      ORGANIZATION,
    ]);
  }
  const server = app.listen(Number(process.env.PORT), '127.0.0.1');
  process.once('SIGTERM', () => server.close(() => void knex.destroy()));
})();
