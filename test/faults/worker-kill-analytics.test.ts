import type { Server } from 'node:http';
import { expect } from 'chai';
import request from 'supertest';
import type { Knex } from 'knex';
import { JobQueues, SERVICES } from '@switchboard/core';
import { apiClient, createTenant, waitFor } from '@switchboard/core/testing';
import campaign from '@switchboard/plugin-campaign';
import { runJson } from '../src/cli';
import { PrivateStack } from './support/private-stack';
import { dirtyReader } from '../src/dirty-reader';
import { providerAHeaders } from '../src/provider-a';

/** Organizations, each with its subscribers, a message and provider events about it. */
const ORGS = 8;
const SUBSCRIBERS = 300;
/** The organization (1-based, in id order) whose rebuild the test holds in the middle, then kills. */
const HELD = 5;
const SECRET = 'analytics-crash-secret';
const KINDS = ['delivered', 'open', 'click', 'bounce', 'unsubscribe'] as const;
/**
 * A rebuild writes no duplicates whatever happens: each organization's figures (and each message's
 * statistics) are replaced in one transaction, so a killed run leaves each either as it was or rebuilt.
 */
const HALF_WRITTEN_ALLOWED = 0;
const COUNTERS = [
  'count_delivered',
  'count_read',
  'count_clicked',
  'count_bounced',
  'count_complained',
  'count_stop',
  'unique_opened',
  'unique_clicked',
];

type Row = Record<string, unknown>;
const snapshot = async (knex: Knex, table: string, key: string, columns: string[], orderBy: string[]) => {
  const byKey = new Map<number, string>();
  const rows: Row[] = await knex(table)
    .orderBy(orderBy)
    .select(key, ...columns);
  for (const r of rows) {
    const k = Number(r[key]);
    byKey.set(k, `${byKey.get(k) ?? ''}${columns.map((c) => String(r[c])).join(',')};`);
  }
  return byKey;
};
const dailyFigures = (knex: Knex) =>
  snapshot(
    knex,
    'analytics_daily',
    'organization_id',
    ['metric', 'day', 'value'],
    ['organization_id', 'metric', 'day'],
  );
const messageStats = async (knex: Knex) => {
  const counters = await snapshot(knex, 'messages', 'id', COUNTERS, ['id']);
  const timelines = await snapshot(
    knex,
    'message_event_rollups',
    'message_id',
    ['period', 'period_start', 'event_type', 'events'],
    ['message_id', 'period', 'period_start', 'event_type'],
  );
  return new Map([...counters].map(([id, c]) => [id, `${c}|${timelines.get(id) ?? ''}`]));
};

/** Per key: the same as the rebuilt figures, the same as before the run, or neither (half written). */
const compare = (now: Map<number, string>, rebuilt: Map<number, string>, before: Map<number, string>) => {
  const keys = [...new Set([...rebuilt.keys(), ...before.keys()])];
  return {
    rebuilt: keys.filter((k) => now.get(k) === rebuilt.get(k)).length,
    as_before: keys.filter((k) => now.get(k) === before.get(k) && now.get(k) !== rebuilt.get(k)).length,
    half_written: keys.filter((k) => now.get(k) !== rebuilt.get(k) && now.get(k) !== before.get(k)).length,
  };
};

/**
 * Issue 26: the analytics rebuild killed with SIGKILL in the middle. `campaign:analytics:rebuild` (all
 * organizations, one after another) is held inside one organization's transaction (a row of its figures
 * locked by the test, the rows before it deleted, not committed) and killed; and the `campaign.stats-rebuild`
 * job of a `switchboard worker`, one message after another, is held the same way inside one message's and
 * the worker killed. Each organization's figures and each message's statistics are then either rebuilt or as
 * they were, never half written; running the command again, or a new worker taking the stalled job again,
 * brings every one to the figures computed from the rows. Private MariaDB and Redis.
 */
describe('faults: analytics rebuilds killed midway [private mariadb+redis]', function () {
  let stack: PrivateStack;
  let server: Server;
  const messages: Array<{ org: number; id: number }> = [];

  before(async function () {
    this.timeout(240_000);
    stack = await PrivateStack.start({ plugins: [campaign], env: { RATE_LIMIT_SCALE: '1000' } });
    server = stack.engine.http().listen(0);
    for (let o = 0; o < ORGS; o++) {
      const tenant = await createTenant(stack.engine, { name: `Org ${o}` });
      const api = apiClient(server, '/api/campaign', tenant);
      const subscribers = Array.from({ length: SUBSCRIBERS }, (_, i) => ({ email: `s${i}@org${o}.test` }));
      await api.post('/subscribers/batch', { subscribers, skip_confirmation: true }).expect(200);
      const ids: Array<{ id: number; email: string }> = await stack.engine
        .knex('subscribers')
        .where({ organization_id: tenant.organizationId })
        .select('id', 'email');
      const message = (
        await api
          .post('/messages', { name: 'M', subject: 'S', content_text: 'T', from_email: 'a@acme.test' })
          .expect(201)
      ).body.data.id;
      messages.push({ org: tenant.organizationId, id: message });
      const endpoint = (
        await api.post('/inbound-webhooks', { provider: 'provider_a', name: 'SG', secret: SECRET }).expect(201)
      ).body.data.id;
      const at = Math.floor(Date.now() / 1000);
      // Each subscriber one event in turn, and every third one a second (an open after the click, ...).
      const events = ids.flatMap(({ id, email }, i) =>
        [KINDS[i % KINDS.length], ...(i % 3 ? [] : ['open'])].map((event, k) => ({
          event,
          email,
          timestamp: at,
          sg_event_id: `e${i}-${k}`,
          campaign_message_id: String(message),
          campaign_subscriber_id: String(id),
        })),
      );
      const body = JSON.stringify(events);
      await request(server)
        .post(`/api/campaign/webhook/provider_a?endpoint=${endpoint}`)
        .set(providerAHeaders(SECRET, body, new Date(at * 1000)))
        .send(body)
        .expect(200);
    }
  });
  after(async () => {
    server?.close();
    await stack?.dispose();
  });

  it('campaign:analytics:rebuild killed mid-organization: each org rebuilt or untouched, the re-run exact', async () => {
    const knex = stack.engine.knex;
    // The figures computed from the rows: an uninterrupted run.
    await runJson(['campaign:analytics:rebuild'], stack.env());
    const rebuilt = await dailyFigures(knex);
    expect(rebuilt.size).to.equal(ORGS);
    // Figures in doubt (the reason to rebuild): every one off.
    await knex('analytics_daily').update({ value: knex.raw('value + 1000') });
    const before = await dailyFigures(knex);

    const held = messages[HELD - 1].org;
    const heldRows: Row[] = await knex('analytics_daily').where({ organization_id: held }).orderBy(['metric', 'day']);
    const middle = heldRows[Math.floor(heldRows.length / 2)];
    const dirty = await dirtyReader(knex);
    const lock = await knex.transaction();
    const command = stack.process(['campaign:analytics:rebuild']);
    let deletedUncommitted = 0;
    let atKill: ReturnType<typeof compare>;
    try {
      await lock('analytics_daily')
        .where({ organization_id: held, metric: middle.metric, day: middle.day })
        .forUpdate()
        .select('value');
      await command.start();
      // The held organization's transaction deleted the rows before the locked one, and waits.
      await waitFor(async () => {
        if (!command.alive) throw new Error(`the rebuild ended:\n${command.logTail()}`);
        return (
          (await dirty.count('SELECT count(*) FROM analytics_daily WHERE organization_id = ?', [held])) <
          heldRows.length
        );
      }, 60_000);
      deletedUncommitted =
        heldRows.length - (await dirty.count('SELECT count(*) FROM analytics_daily WHERE organization_id = ?', [held]));
      await command.kill();
      atKill = compare(await dailyFigures(knex), rebuilt, before);
    } finally {
      await lock.rollback();
    }
    // The dead command's transaction is rolled back with its connection.
    try {
      await waitFor(
        async () =>
          (await dirty.count('SELECT count(*) FROM analytics_daily WHERE organization_id = ?', [held])) ===
          heldRows.length,
        30_000,
      );
    } finally {
      await dirty.close();
    }
    const afterKill = compare(await dailyFigures(knex), rebuilt, before);
    await runJson(['campaign:analytics:rebuild'], stack.env());
    const afterRerun = compare(await dailyFigures(knex), rebuilt, before);

    console.log(
      `      figures ${JSON.stringify({
        organizations: ORGS,
        rows: [...rebuilt.values()].reduce((n, v) => n + v.split(';').length - 1, 0),
        held_org_rows_deleted_uncommitted_at_kill: deletedUncommitted,
        at_kill: atKill,
        after_kill: afterKill,
        after_rerun: afterRerun,
        lost: ORGS - afterRerun.rebuilt,
      })}`,
    );

    expect(atKill.rebuilt, 'the organizations before the held one').to.equal(HELD - 1);
    expect(atKill.half_written).to.be.at.most(HALF_WRITTEN_ALLOWED);
    expect(afterKill).to.deep.equal({ rebuilt: HELD - 1, as_before: ORGS - HELD + 1, half_written: 0 });
    expect(afterRerun).to.deep.equal({ rebuilt: ORGS, as_before: 0, half_written: 0 });
  }).timeout(180_000);

  it('the stats-rebuild job, worker killed mid-message: each message rebuilt or untouched, the new worker exact', async () => {
    const knex = stack.engine.knex;
    // The statistics the events gave (a rebuild gives them back: the ledger replayed).
    const live = await messageStats(knex);
    await knex('messages').update(Object.fromEntries(COUNTERS.map((c) => [c, knex.raw('?? + 1000', [c])])));
    await knex('message_event_rollups').update({ events: knex.raw('events + 1000') });
    const before = await messageStats(knex);

    const held = messages[HELD - 1].id;
    const worker = stack.process(['worker']);
    const dirty = await dirtyReader(knex);
    const lock = await knex.transaction();
    const timelineRows = Number(
      (await knex('message_event_rollups').where({ message_id: held }).count({ n: '*' }))[0].n,
    );
    let atKill: ReturnType<typeof compare>;
    try {
      // The last timeline row of the held message: its rebuild deletes the rows before it, then waits.
      const last: Row = await knex('message_event_rollups')
        .where({ message_id: held })
        .orderBy([
          { column: 'period', order: 'desc' },
          { column: 'period_start', order: 'desc' },
          { column: 'event_type', order: 'desc' },
        ])
        .first();
      await lock('message_event_rollups')
        .where({ message_id: held, period: last.period, period_start: last.period_start, event_type: last.event_type })
        .forUpdate()
        .select('events');
      // What `campaign:stats-rebuild --org ID --message ID --queue` adds, for every message in turn.
      const queue = stack.engine.container.resolve<JobQueues>(SERVICES.Queues).get('campaign.stats-rebuild');
      for (const m of messages) await queue.add({ organizationId: m.org, messageId: m.id });
      await worker.start();
      await waitFor(
        async () =>
          (await dirty.count('SELECT count(*) FROM message_event_rollups WHERE message_id = ?', [held])) < timelineRows,
        60_000,
      );
      await worker.kill();
      atKill = compare(await messageStats(knex), live, before);
    } finally {
      await lock.rollback();
      await dirty.close();
    }
    const killedAt = Date.now();
    await worker.start();
    await waitFor(async () => compare(await messageStats(knex), live, before).rebuilt === ORGS, 60_000, 200);
    const doneMs = Date.now() - killedAt;
    const afterRestart = compare(await messageStats(knex), live, before);

    console.log(
      `      figures ${JSON.stringify({
        messages: ORGS,
        at_kill: atKill,
        after_restart: afterRestart,
        all_rebuilt_after_kill_ms: doneMs,
        lost: ORGS - afterRestart.rebuilt,
      })}`,
    );

    expect(atKill.rebuilt, 'the messages before the held one').to.equal(HELD - 1);
    expect(atKill.half_written).to.be.at.most(HALF_WRITTEN_ALLOWED);
    expect(afterRestart).to.deep.equal({ rebuilt: ORGS, as_before: 0, half_written: 0 });
  }).timeout(180_000);
});
