import crypto from 'node:crypto';
import { expect } from 'chai';
import type { Engine } from '@switchboard/core';
import {
  apiClient,
  ApiClient,
  createTenant,
  createTestEngine,
  productionBackend,
  TestBackend,
  waitFor,
} from '@switchboard/core/testing';
import campaign from '@switchboard/plugin-campaign';
import { exitOf, freePort, startCli } from '../src/cli';
import { dirtyReader } from '../src/dirty-reader';
import { providerAHeaders } from '../src/provider-a';

/** The API (this process) seals the endpoint's secret; the serve process opens it: one key for both. */
const APP_KEY = crypto.randomBytes(32).toString('base64');
const SECRET = 'crash-secret';

const signed = (body: string) => providerAHeaders(SECRET, body);

/**
 * Issue 23: a provider's event and what it does (the message's counter, the subscriber's status) are one
 * commit. A `switchboard serve` process is killed with SIGKILL after it wrote a hard bounce's record and
 * counted it, before it moved the subscriber (held there by a lock this test takes on the status counts):
 * none of it is kept. The
 * provider's retry, to a new process, is recorded and applied once, so the bounced address is never
 * left receiving mail. MariaDB and Redis.
 */
describe('a provider event survives a process killed between its record and its effects [mysql+redis]', function () {
  let backend: TestBackend | null = null;
  let engine: Engine;
  let api: ApiClient;
  let serve: ReturnType<typeof startCli> | undefined;
  let base = '';

  before(async function () {
    backend = await productionBackend();
    if (!backend) return this.skip();
    engine = await createTestEngine(backend, { plugins: [campaign], env: { APP_KEY } });
    api = apiClient(engine.http().listen(0), '/api/campaign', await createTenant(engine));
  });
  after(async () => {
    serve?.kill('SIGKILL');
    if (serve) await exitOf(serve);
    await engine?.close();
    await backend?.dispose();
  });

  const start = async () => {
    const port = await freePort();
    serve = startCli(['serve', '--no-scheduler'], {
      DATABASE_URL: backend!.databaseUrl,
      REDIS_URL: backend!.redisUrl!,
      REDIS_PREFIX: backend!.redisPrefix,
      PLUGINS: 'campaign',
      DATA_DIR: backend!.dataDir,
      APP_KEY,
      PORT: String(port),
    });
    base = `http://127.0.0.1:${port}`;
    await waitFor(async () => (await fetch(`${base}/health`).catch(() => null))?.ok === true, 30_000);
  };
  /** What the database holds of the test's event and message, committed or not. */
  const uncommitted = async (message: number) => {
    const reader = await dirtyReader(engine.knex);
    return {
      read: async () => ({
        recorded: await reader.count('SELECT count(*) FROM inbound_events WHERE provider_event_id = ?', [
          'bounce:crash-bounce-1',
        ]),
        bounced: await reader.count('SELECT count_bounced FROM messages WHERE id = ?', [message]),
      }),
      close: () => reader.close(),
    };
  };

  it('keeps neither the record nor its effects, and the retry applies both once', async () => {
    const list = (await api.post('/lists', { name: 'L', code: 'l' }).expect(201)).body.data.id;
    const subscriber = (
      await api.post('/subscribers', { email: 'gone@crash.test', lists: [list], confirmed: true }).expect(201)
    ).body.data.id;
    const message = (
      await api.post('/messages', { name: 'M', subject: 'S', content_text: 'T', from_email: 'a@acme.test' }).expect(201)
    ).body.data.id;
    const endpoint = (
      await api.post('/inbound-webhooks', { provider: 'provider_a', name: 'SG', secret: SECRET }).expect(201)
    ).body.data;
    const event = (type: string, id: string) => ({
      event: type,
      type: 'bounce',
      email: 'gone@crash.test',
      timestamp: Math.floor(Date.now() / 1000),
      sg_event_id: id,
      campaign_message_id: String(message),
      campaign_subscriber_id: String(subscriber),
    });
    const body = JSON.stringify([event('bounce', 'crash-bounce-1')]);
    const deliver = (events = body) =>
      fetch(`${base}/api/campaign/webhook/provider_a?endpoint=${endpoint.id}`, {
        method: 'POST',
        headers: signed(events),
        body: events,
      });
    const state = async () => ({
      recorded: Number(
        (await engine.knex('inbound_events').where({ provider_event_id: 'bounce:crash-bounce-1' }).count({ n: '*' }))[0]
          .n,
      ),
      bounced: Number((await engine.knex('messages').where({ id: message }).first('count_bounced')).count_bounced),
      status: (await api.get(`/subscribers/${subscriber}`).expect(200)).body.data.status,
    });

    await start();
    // A first event makes the organization's status count rows, outside any transaction.
    expect((await deliver(JSON.stringify([event('delivered', 'crash-delivered-1')]))).status).to.equal(200);
    const dirty = await uncommitted(message);
    const lock = await engine.knex.transaction();
    try {
      // The organization's count of active subscribers: the status change, the last effect, waits for it.
      await lock('subscriber_counts').where({ status: 'active' }).forUpdate().select('count');
      let answered: Response | null = null;
      const answer = deliver().then(
        (res) => (answered = res),
        () => null,
      );
      // The serve process wrote the record and the message's counter, and waits to move the subscriber.
      await waitFor(async () => {
        if (answered) throw new Error(`answered before the crash: ${answered.status}`);
        return (await dirty.read()).recorded === 1;
      }, 20_000);
      expect(await dirty.read(), 'written, not committed').to.deep.equal({ recorded: 1, bounced: 1 });
      serve!.kill('SIGKILL');
      await exitOf(serve!);
      serve = undefined;
      expect(await answer, 'the provider got no answer: it will try again').to.equal(null);
    } finally {
      await lock.rollback();
    }
    // The killed process's connection goes, and its transaction with it.
    try {
      await waitFor(async () => (await dirty.read()).recorded === 0, 20_000);
    } finally {
      await dirty.close();
    }
    expect(await state()).to.deep.equal({ recorded: 0, bounced: 0, status: 'active' });

    await start();
    const retried = await deliver();
    expect(retried.status).to.equal(200);
    expect(await state()).to.deep.equal({ recorded: 1, bounced: 1, status: 'bounced' });
    // A second retry is recorded already: it changes nothing.
    expect((await deliver()).status).to.equal(200);
    expect(await state()).to.deep.equal({ recorded: 1, bounced: 1, status: 'bounced' });
  }).timeout(120_000);
});
