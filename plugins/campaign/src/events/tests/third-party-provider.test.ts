import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import request from 'supertest';
import { describeEachBackend, smtpSink, SmtpSink, waitFor } from '@switchboard/core/testing';
import { installProviderF } from '@switchboard/provider-kit/test/provider-f-package';
import { campaignContainer, campaignFixture, CampaignFixture } from '../../shared/tests/support';
import { ADAPTER_DEADLINE_MS } from '../provider-request';
import { listOf, mailsOf, sendNow, inboundEndpoint } from '../../shared/tests/sending-support';

/**
 * A third party's adapter package, installed outside this repository and named in the campaign plugin's options:
 * no campaign code knows it, yet it gets endpoints, its signed events are recorded and counted.
 */
describeEachBackend('campaign: a third-party provider adapter enabled by config alone', (backend) => {
  const packageDir = installProviderF();
  let f: CampaignFixture;
  let sink: SmtpSink;
  let message: number;
  before(async () => {
    sink = await smtpSink();
    f = await campaignFixture(backend(), { SMTP_URL: sink.url }, undefined, {
      plugins: [
        {
          id: 'campaign',
          package: '@switchboard/plugin-campaign',
          options: { providers: { provider_a: '@switchboard/provider-a', provider_f: packageDir } },
        },
      ],
    });
    f.engine.startWorkers();
    message = await sendNow(f, [await listOf(f, ['grace@example.com'])]);
    await waitFor(
      async () => (await f.api().get(`/messages/${message}`).expect(200)).body.data.status === 'sent',
      15_000,
    );
  });
  after(async () => {
    await f?.close();
    await sink?.close();
    fs.rmSync(path.dirname(path.dirname(packageDir)), { recursive: true, force: true });
  });

  it('gets an endpoint, tags mail with its header and counts its signed events', async () => {
    const [mail] = mailsOf(sink, message);
    const ref = /^X-Provider-F-Ref: (\d+\.\d+)\r?$/m.exec(mail.raw)?.[1];
    expect(ref, 'the mail carries the adapter header').to.be.a('string');

    const endpoint = await inboundEndpoint(f, { provider: 'provider_f', name: 'F', secret: 'f-token-123' });
    const body = JSON.stringify({
      events: [
        { id: 'f-1', type: 'delivered', email: 'grace@example.com', ref },
        { id: 'f-2', type: 'bounced', email: 'grace@example.com', ref },
      ],
    });
    const path = `/api/campaign/webhook/provider_f?endpoint=${endpoint.id}`;
    const send = (token: string) =>
      request(f.server).post(path).set({ 'content-type': 'application/json', 'x-provider-f-token': token }).send(body);
    await send('wrong-token').expect(401);
    expect((await send('f-token-123').expect(200)).body.data).to.deep.equal({ received: 2, recorded: 2 });

    const stats = (await f.api().get(`/messages/${message}/stats`).expect(200)).body.data;
    expect(stats.summary).to.include({ delivered: 1, bounced: 1 });
    const subscriber = ref!.split('.')[1];
    expect((await f.api().get(`/subscribers/${subscriber}`).expect(200)).body.data.status).to.equal('bounced');

    const refused = await f.api().post('/inbound-webhooks', { provider: 'provider_b', name: 'not enabled' });
    expect(refused.status).to.equal(422);
    expect(refused.body.error.details).to.deep.equal({ field: 'provider', rule: 'enum' });
  });
  it("answers 503 when the adapter's verify or normalize never settles, and records the retry once it does", async function () {
    this.timeout(30_000);
    // The package as the engine loaded it (the same module): its steps made to hang, then given back.
    const adapter = require(packageDir) as {
      verify: (...a: unknown[]) => unknown;
      normalize: (...a: unknown[]) => unknown;
    };
    const { verify, normalize } = adapter;
    campaignContainer(f.engine).register(ADAPTER_DEADLINE_MS, { useValue: 300 });
    const endpoint = await inboundEndpoint(f, { provider: 'provider_f', name: 'F-late', secret: 'f-late-1' });
    const body = JSON.stringify({ events: [{ id: 'late-1', type: 'delivered', email: 'grace@example.com' }] });
    const send = () =>
      request(f.server)
        .post(`/api/campaign/webhook/provider_f?endpoint=${endpoint.id}`)
        .set({ 'content-type': 'application/json', 'x-provider-f-token': 'f-late-1' })
        .send(body);
    const recorded = async () =>
      Number(
        (
          await f.engine
            .knex('inbound_events')
            .where({ provider: 'provider_f', provider_event_id: 'late-1' })
            .count({ n: '*' })
        )[0].n,
      );
    try {
      adapter.verify = () => new Promise(() => {});
      const late = await send();
      expect(late.status, JSON.stringify(late.body)).to.equal(503);
      expect(late.body.error.code).to.equal('SERVICE_UNAVAILABLE');
      expect(late.body.error.message).to.contain('did not verify the request in time');
      expect(late.headers['retry-after']).to.be.a('string');
      adapter.verify = verify;
      adapter.normalize = () => new Promise(() => {});
      const unread = await send();
      expect(unread.status).to.equal(503);
      expect(unread.body.error.message).to.contain('did not read the request in time');
      expect(await recorded()).to.equal(0);
    } finally {
      adapter.verify = verify;
      adapter.normalize = normalize;
      campaignContainer(f.engine).register(ADAPTER_DEADLINE_MS, { useValue: 10_000 });
    }
    expect((await send().expect(200)).body.data).to.deep.equal({ received: 1, recorded: 1 });
    expect(await recorded()).to.equal(1);
  });
});
