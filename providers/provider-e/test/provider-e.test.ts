import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { hmacSha256, InboundRequest, memoryReplayGuard, ProviderError } from '@switchboard/provider-kit';
import { runAdapterContract } from '@switchboard/provider-kit/contract';
import providerE from '../src';

const fixture = (name: string) => fs.readFileSync(path.join(__dirname, '../../test/fixtures', name));
const request = (body: Buffer | string): InboundRequest => ({
  rawBody: Buffer.from(body),
  headers: { 'content-type': 'application/json' },
  query: {},
});

/** The body with its signature made anew at `at`, a fresh token (garbage bodies are sent as they are). */
function signed(body: Buffer, secret: string, at: Date): InboundRequest {
  let envelope: Record<string, unknown>;
  try {
    envelope = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
  } catch {
    return request(body);
  }
  if (typeof envelope !== 'object' || envelope === null || Array.isArray(envelope)) return request(body);
  const timestamp = String(Math.floor(at.getTime() / 1000));
  const token = crypto.randomBytes(25).toString('hex');
  const signature = hmacSha256(secret, timestamp, token).toString('hex');
  return request(JSON.stringify({ ...envelope, signature: { timestamp, token, signature } }));
}
const without = (field: string) => (r: InboundRequest) => {
  const envelope = JSON.parse(r.rawBody.toString('utf8')) as { signature: Record<string, unknown> };
  delete envelope.signature[field];
  return request(JSON.stringify(envelope));
};
const sample = (n: number) => fixture(`provider_e_sample${n}.json`);
const eventData = { email: 'ada@example.com', ts_event: 1767225600, 'message-id': '<m1@relay.example>' };
const envelopeOf = (data: Record<string, unknown>, token: string) =>
  JSON.stringify({ signature: { timestamp: '1', token, signature: 'x' }, 'event-data': { ...eventData, ...data } });

runAdapterContract({
  adapter: providerE,
  endpoint: { secret: 'TEST_WEBHOOK_SIGNING_KEY' },
  sign: (body, endpoint, at) => signed(body, endpoint.secret, at),
  body: sample(1),
  removeEach: [without('timestamp'), without('token'), without('signature')],
  // Mailgun signs the timestamp and the token, not the body.
  signsBody: false,
  // Mailgun retries for 8 hours, perhaps with the first try's signature: its retries are taken; 5 minutes of skew ahead.
  maxAgeSeconds: 9 * 3600,
  maxAheadSeconds: 300,
  refusesReplay: true,
  fixtures: [
    {
      name: 'a delivery (sample 1)',
      request: request(sample(1)),
      events: [
        {
          type: 'delivered',
          recipient: 'example@domain.com',
          providerMessageId: '201798300811.5787683@relay.domain.com',
          providerEventId: '3b0f1e5d9c2a4e7f8b6d1c0a9e8f7d6c5b4a3f2e1d0c9b8a7f',
          messageId: null,
          occurredAt: '2020-11-09T14:54:14.000Z',
        },
      ],
    },
    { name: 'an open (sample 2)', request: request(sample(2)), events: [{ type: 'opened' }] },
    {
      name: 'a click with its link (sample 3)',
      request: request(sample(3)),
      events: [{ type: 'clicked', url: 'https://example.com/pricing' }],
    },
    {
      name: 'a hard bounce with our ids',
      request: request(
        envelopeOf(
          { event: 'hard_bounce', 'X-Mailin-custom': '{"campaign_message_id":"5","campaign_subscriber_id":"6"}' },
          't-hard',
        ),
      ),
      events: [
        { type: 'bounced', bounce: 'hard', messageId: 5, subscriberId: 6, providerMessageId: 'm1@relay.example' },
      ],
    },
    {
      name: 'a soft bounce',
      request: request(envelopeOf({ event: 'soft_bounce' }, 't-soft')),
      events: [{ type: 'bounced', bounce: 'soft' }],
    },
    {
      name: 'click',
      request: request(envelopeOf({ event: 'click', link: 'https://a.example' }, 't-click')),
      events: [{ type: 'clicked', url: 'https://a.example' }],
    },
    {
      name: 'unique_opened',
      request: request(envelopeOf({ event: 'unique_opened' }, 't-open')),
      events: [{ type: 'opened' }],
    },
    { name: 'spam', request: request(envelopeOf({ event: 'spam' }, 't-spam')), events: [{ type: 'complained' }] },
    { name: 'deferred: no event', request: request(envelopeOf({ event: 'deferred' }, 't-def')), events: [] },
  ],
  echo: (headers) => request(envelopeOf({ event: 'opened', 'X-Mailin-custom': headers['X-Mailin-custom'] }, 't-echo')),
});

describe('provider_e: the samples as signed', () => {
  it('verifies sample 1 with TEST_WEBHOOK_SIGNING_KEY at its own time', async () => {
    const context = { now: () => new Date(1604933654 * 1000), replay: memoryReplayGuard() };
    await providerE.verify(request(sample(1)), { secret: 'TEST_WEBHOOK_SIGNING_KEY' }, context);
  });

  it("refuses a subaccount's envelope by the parent-signature alone (its holder receives those too)", async () => {
    const envelope = JSON.parse(sample(1).toString('utf8')) as { signature: Record<string, string> };
    const { timestamp, token } = envelope.signature;
    envelope.signature.signature = hmacSha256('subaccount-key', timestamp, token).toString('hex');
    envelope.signature['parent-signature'] = hmacSha256('primary-key', timestamp, token).toString('hex');
    const context = () => ({ now: () => new Date(Number(timestamp) * 1000), replay: memoryReplayGuard() });
    await providerE.verify(request(JSON.stringify(envelope)), { secret: 'subaccount-key' }, context());
    const refused = await providerE
      .verify(request(JSON.stringify(envelope)), { secret: 'primary-key' }, context())
      .then(
        () => null,
        (err: unknown) => err,
      );
    expect(refused).to.be.instanceOf(ProviderError).with.property('kind', 'signature');
  });
});

describe("provider_e: Brevo's own webhook body, with the credentials Brevo sends", () => {
  const body = fs.readFileSync(path.join(__dirname, '../../test/fixtures', 'brevo_delivered_documented.json'));
  const withAuthorization = (authorization?: string): InboundRequest => ({
    rawBody: body,
    headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
    query: {},
  });
  const context = { now: () => new Date(), replay: memoryReplayGuard() };

  it('verifies HTTP Basic credentials or a bearer token equal to the secret, and refuses others', async () => {
    const basic = `Basic ${Buffer.from('brevo:hook-pass').toString('base64')}`;
    await providerE.verify(withAuthorization(basic), { secret: 'brevo:hook-pass' }, context);
    await providerE.verify(withAuthorization('Bearer token-the-user-set'), { secret: 'token-the-user-set' }, context);
    for (const [authorization, secret] of [
      [undefined, 'brevo:hook-pass'],
      ['Bearer another-token', 'token-the-user-set'],
      [basic, 'brevo:other-pass'],
    ] as const) {
      const refused = await providerE
        .verify(withAuthorization(authorization), { secret }, context)
        .catch((err: unknown) => err);
      expect(refused, String(authorization)).to.be.instanceOf(ProviderError).with.property('kind', 'signature');
    }
  });

  it('reads a batched webhook (an array of Brevo events), each event with its own id as when posted alone', async () => {
    const delivered = JSON.parse(body.toString()) as Record<string, unknown>;
    const click = { ...delivered, event: 'click', link: 'https://acme.test/a', ts_epoch: 1598634509300 };
    const deferred = { ...delivered, event: 'deferred', ts_epoch: 1598634509400 };
    const batch = {
      ...withAuthorization('Bearer t'),
      rawBody: Buffer.from(JSON.stringify([delivered, click, deferred])),
    };
    await providerE.verify(batch, { secret: 't' }, context);
    const events = await providerE.normalize(batch);
    expect(events.map((e) => e.type)).to.deep.equal(['delivered', 'clicked']);
    expect(events[1]).to.deep.include({ url: 'https://acme.test/a' });
    const [alone] = await providerE.normalize(withAuthorization());
    expect(events[0].providerEventId).to.equal(alone.providerEventId);
    for (const wrong of [[], [delivered, 'x'], [{ ...delivered, signature: {} }]]) {
      const refused = await Promise.resolve()
        .then(() => providerE.normalize({ ...withAuthorization(), rawBody: Buffer.from(JSON.stringify(wrong)) }))
        .catch((err: unknown) => err);
      expect(refused, JSON.stringify(wrong)).to.be.instanceOf(ProviderError).with.property('kind', 'malformed');
    }
  });

  it("reads Brevo's documented delivered event, the same id on a retry", async () => {
    const [event] = await providerE.normalize(withAuthorization());
    expect(event).to.deep.include({
      type: 'delivered',
      recipient: 'example@domain.com',
      providerMessageId: '201798300811.5787683@relay.domain.com',
    });
    expect(event.occurredAt.getTime()).to.equal(1598634509223);
    const [again] = await providerE.normalize(withAuthorization());
    expect(again.providerEventId).to.equal(event.providerEventId);
    // Another event (a millisecond later) is another id; a time that is no time falls back to ts_event.
    const later = JSON.parse(body.toString()) as Record<string, unknown>;
    const [next] = await providerE.normalize({
      ...withAuthorization(),
      rawBody: Buffer.from(JSON.stringify({ ...later, ts_epoch: 1598634509224 })),
    });
    expect(next.providerEventId).to.not.equal(event.providerEventId);
    const [odd] = await providerE.normalize({
      ...withAuthorization(),
      rawBody: Buffer.from(JSON.stringify({ ...later, ts_epoch: 1e20 })),
    });
    expect(odd.occurredAt.getTime()).to.equal(1598034509000);
    // Seconds, as Brevo's documentation's examples give them: not January 1970.
    const [seconds] = await providerE.normalize({
      ...withAuthorization(),
      rawBody: Buffer.from(JSON.stringify({ ...later, ts_epoch: 1604933654 })),
    });
    expect(seconds.occurredAt.toISOString()).to.equal('2020-11-09T14:54:14.000Z');
  });
});
