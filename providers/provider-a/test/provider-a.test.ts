import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { InboundRequest, memoryReplayGuard, ProviderError } from '@switchboard/provider-kit';
import { runAdapterContract } from '@switchboard/provider-kit/contract';
import { EventWebhook } from '@sendgrid/eventwebhook';
import providerA from '../src';
import { signedHeaders } from '../src/testing';

const fixture = (name: string) => fs.readFileSync(path.join(__dirname, '../../test/fixtures', name));
const request = (body: Buffer, headers: Record<string, string> = {}): InboundRequest => ({
  rawBody: body,
  headers: { 'content-type': 'application/json', ...headers },
  query: {},
});
const signed = (body: Buffer, secret: string, at: Date) => request(body, signedHeaders(secret, body, at));
const without =
  (name: string) =>
  ({ headers, ...rest }: InboundRequest): InboundRequest => ({
    ...rest,
    headers: Object.fromEntries(Object.entries(headers).filter(([key]) => key !== name)),
  });
const at = (seconds: number) => new Date(seconds * 1000).toISOString();

runAdapterContract({
  adapter: providerA,
  endpoint: { secret: 'TEST_WEBHOOK_SIGNING_KEY' },
  sign: (body, endpoint, at) => signed(body, endpoint.secret, at),
  body: fixture('provider_a_sample2.json'),
  removeEach: [without('x-twilio-email-event-webhook-signature'), without('x-twilio-email-event-webhook-timestamp')],
  signsBody: true,
  // SendGrid retries for 24 hours, perhaps with the first try's signature: its retries are taken; 5 minutes of skew ahead.
  maxAgeSeconds: 25 * 3600,
  maxAheadSeconds: 300,
  refusesReplay: false,
  fixtures: [
    {
      name: 'one event of each kind (sample 1): deferred and group_resubscribe count nothing',
      request: request(fixture('provider_a_sample1.json')),
      events: [
        { type: 'sent', recipient: 'example@test.com', providerMessageId: 'sg_message_id', occurredAt: at(1513299569) },
        { type: 'delivered' },
        { type: 'opened' },
        { type: 'clicked', url: 'http://www.sendgrid.com/' },
        { type: 'bounced', bounce: 'hard' },
        { type: 'dropped' },
        { type: 'complained' },
        { type: 'unsubscribed' },
        { type: 'unsubscribed', providerEventId: 'group_unsubscribe:sg_event_id' },
      ],
    },
    {
      name: 'a bounce and a block (sample 2)',
      request: request(fixture('provider_a_sample2.json')),
      // The docs' two examples share one sg_event_id.
      idsRepeat: true,
      events: [
        {
          type: 'bounced',
          bounce: 'hard',
          providerMessageId: '14c5d75ce93',
          providerEventId: 'bounce:6g4ZI7SA-xmRDv57GoPIPw==',
        },
        { type: 'bounced', bounce: 'soft' },
      ],
    },
    {
      name: 'events with custom args and categories (sample 3)',
      request: request(fixture('provider_a_sample3.json')),
      events: [
        { type: 'sent', providerMessageId: 'wrfRRvF7Q0GgwUo2CvDmEA', messageId: null, occurredAt: at(1461095246) },
        { type: 'delivered', providerEventId: 'delivered:nOSv8m0eTQ-vxvwNwt3fZQ' },
        { type: 'opened' },
        { type: 'clicked', url: 'http://www.example.com', providerMessageId: '_fjPjuJfRW-IPs5SuvYotg' },
      ],
    },
    {
      name: "the campaign spec's own names: sent, open, spamreport",
      request: request(
        Buffer.from(
          JSON.stringify(
            ['sent', 'open', 'spamreport'].map((event, i) => ({
              event,
              email: 'a@b.example',
              timestamp: 1,
              sg_event_id: `s${i}`,
            })),
          ),
        ),
      ),
      events: [{ type: 'sent' }, { type: 'opened' }, { type: 'complained' }],
    },
  ],
  echo: (headers) => {
    const { unique_args: args } = JSON.parse(headers['X-SMTPAPI']) as { unique_args: Record<string, string> };
    const event = { email: 'ada@example.com', timestamp: 1767225600, event: 'open', sg_event_id: 'e1', ...args };
    return request(Buffer.from(JSON.stringify([event])));
  },
});

describe("provider_a: ECDSA when the secret is SendGrid's verification key", () => {
  const vector = JSON.parse(fixture('provider_a_signature_testvector.json').toString()) as Record<string, string>;
  const endpoint = { secret: vector.public_key_base64_der_spki };
  const context = {
    now: () => new Date(Number(vector['header_X-Twilio-Email-Event-Webhook-Timestamp']) * 1000),
    replay: memoryReplayGuard(),
  };
  const vectorRequest = (body: string) =>
    request(Buffer.from(body), {
      'x-twilio-email-event-webhook-timestamp': vector['header_X-Twilio-Email-Event-Webhook-Timestamp'],
      'x-twilio-email-event-webhook-signature': vector['header_X-Twilio-Email-Event-Webhook-Signature'],
    });

  it("verifies SendGrid's test vector", async () => {
    await providerA.verify(vectorRequest(vector.raw_body), endpoint, context);
  });

  it('refuses the vector with a changed body, and an HMAC signature made with the key as a secret', async () => {
    const changed = await providerA
      .verify(vectorRequest(vector.raw_body.replace('test_event', 'test_evenT')), endpoint, context)
      .catch((err: unknown) => err);
    expect(changed).to.be.instanceOf(ProviderError).with.property('kind', 'signature');
    const hmac = await providerA
      .verify(signed(Buffer.from(vector.raw_body), endpoint.secret, context.now()), endpoint, context)
      .catch((err: unknown) => err);
    expect(hmac).to.be.instanceOf(ProviderError).with.property('kind', 'signature');
  });
});

describe("provider_a: SendGrid's own library (@sendgrid/eventwebhook) as the examiner", () => {
  const library = new EventWebhook();
  const { publicKey, privateKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const publicBase64 = publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
  /** What SendGrid does: ECDSA P-256 over timestamp + body with SHA-256, DER, base64. */
  const sendgridSigns = (body: string, timestamp: string) =>
    crypto.sign('sha256', Buffer.from(timestamp + body), privateKey).toString('base64');

  it("agrees with the library on SendGrid's test vector and on events signed as SendGrid signs them", async () => {
    const vector = JSON.parse(fixture('provider_a_signature_testvector.json').toString()) as Record<string, string>;
    const timestamp = vector['header_X-Twilio-Email-Event-Webhook-Timestamp'];
    const signature = vector['header_X-Twilio-Email-Event-Webhook-Signature'];
    const key = library.convertPublicKeyToECDSA(vector.public_key_base64_der_spki);
    expect(library.verifySignature(key, vector.raw_body, signature, timestamp)).to.equal(true);

    const now = new Date();
    const at = String(Math.floor(now.getTime() / 1000));
    const body = JSON.stringify([
      {
        email: 'ada@example.com',
        timestamp: Number(at),
        event: 'delivered',
        sg_event_id: 'lib-1',
        sg_message_id: 'm1.x',
      },
    ]);
    const ours = sendgridSigns(body, at);
    expect(library.verifySignature(library.convertPublicKeyToECDSA(publicBase64), body, ours, at)).to.equal(true);
    const context = { now: () => now, replay: memoryReplayGuard() };
    const headers = {
      'x-twilio-email-event-webhook-timestamp': at,
      'x-twilio-email-event-webhook-signature': ours,
    };
    await providerA.verify(request(Buffer.from(body), headers), { secret: publicBase64 }, context);
    // A body the library refuses, the adapter refuses too.
    const changed = body.replace('delivered', 'bounce');
    expect(library.verifySignature(library.convertPublicKeyToECDSA(publicBase64), changed, ours, at)).to.equal(false);
    const refused = await providerA
      .verify(request(Buffer.from(changed), headers), { secret: publicBase64 }, context)
      .catch((err: unknown) => err);
    expect(refused).to.be.instanceOf(ProviderError).with.property('kind', 'signature');
  });

  it('takes the verification key armoured as PEM, as the library armours it; PEM of anything else verifies nothing', async () => {
    const now = new Date();
    const at = String(Math.floor(now.getTime() / 1000));
    const body = JSON.stringify([
      { email: 'ada@example.com', timestamp: Number(at), event: 'open', sg_event_id: 'pem-1' },
    ]);
    const headers = {
      'x-twilio-email-event-webhook-timestamp': at,
      'x-twilio-email-event-webhook-signature': sendgridSigns(body, at),
    };
    const context = { now: () => now, replay: memoryReplayGuard() };
    // The library's own PEM, with the line breaks a copy from a text file adds.
    // (starkbank-ecdsa's key, whose toPem the library's types leave out.)
    const armoured = library.convertPublicKeyToECDSA(publicBase64) as unknown as { toPem(): string };
    const pem = `${armoured.toPem()}\n`;
    expect(pem).to.match(/^-----BEGIN PUBLIC KEY-----\n/);
    await providerA.verify(request(Buffer.from(body), headers), { secret: pem }, context);
    // Taken for an HMAC secret until session 36: SendGrid's every request refused, the reason unsaid.
    const rsa = crypto
      .generateKeyPairSync('rsa', { modulusLength: 1024 })
      .publicKey.export({ type: 'spki', format: 'pem' });
    const refused = await providerA
      .verify(request(Buffer.from(body), headers), { secret: String(rsa) }, context)
      .catch((err: unknown) => err);
    expect(refused).to.be.instanceOf(ProviderError).with.property('kind', 'signature');
    expect((refused as Error).message).to.contain('PEM but not an ECDSA P-256 public key');
    // Its lines joined (an environment variable, a JSON string): taken all the same.
    const joined = pem.trim().replace(/\n/g, ' ');
    await providerA.verify(request(Buffer.from(body), headers), { secret: joined }, context);
    // The private key pasted by mistake, and a key of another curve, verify nothing (Node derives a public
    // key from a private one: it would have been kept as the endpoint's secret and worked).
    const pair = crypto.generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    const other = crypto.generateKeyPairSync('ec', { namedCurve: 'secp384r1' });
    for (const secret of [
      String(pair.privateKey.export({ type: 'pkcs8', format: 'pem' })),
      String(pair.privateKey.export({ type: 'sec1', format: 'pem' })),
      String(other.publicKey.export({ type: 'spki', format: 'pem' })),
    ]) {
      const signedByPair = {
        ...headers,
        'x-twilio-email-event-webhook-signature': crypto
          .sign('sha256', Buffer.from(at + body), pair.privateKey)
          .toString('base64'),
      };
      const err = await providerA
        .verify(request(Buffer.from(body), signedByPair), { secret }, context)
        .catch((e: unknown) => e);
      expect(err, secret.split('\n')[0]).to.be.instanceOf(ProviderError).with.property('kind', 'signature');
    }
  });
});
