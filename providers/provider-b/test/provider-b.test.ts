import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { hmacSha256, InboundRequest, isProviderError, memoryReplayGuard } from '@switchboard/provider-kit';
import { runAdapterContract } from '@switchboard/provider-kit/contract';
import providerB from '../src';

type Fields = Record<string, string>;
const sample = (n: number) =>
  JSON.parse(
    fs.readFileSync(path.join(__dirname, '../../test/fixtures', `provider_b_sample${n}.json`), 'utf8'),
  ) as Fields;
const urlencoded = (fields: Fields): InboundRequest => ({
  rawBody: Buffer.from(new URLSearchParams(fields).toString()),
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  query: {},
});
function multipart(fields: Fields): InboundRequest {
  const boundary = 'sb-boundary-1';
  const parts = Object.entries(fields).map(
    ([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`,
  );
  const file = `--${boundary}\r\nContent-Disposition: form-data; name="attachment-1"; filename="bounce.eml"\r\nContent-Type: message/rfc822\r\n\r\nSubject: x\r\n\r\nbody\r\n`;
  return {
    rawBody: Buffer.from(`${parts.join('')}${file}--${boundary}--\r\n`),
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
    query: {},
  };
}
const json = (fields: Fields): InboundRequest => ({
  rawBody: Buffer.from(JSON.stringify(fields)),
  headers: { 'content-type': 'application/json' },
  query: {},
});
const signedFields = (fields: Fields, secret: string, at: Date): Fields => {
  const timestamp = String(Math.floor(at.getTime() / 1000));
  const token = crypto.randomBytes(25).toString('hex');
  return { ...fields, timestamp, token, signature: hmacSha256(secret, timestamp, token).toString('hex') };
};
/** The contract's bodies are urlencoded fields; anything else (garbage) is sent as it is. */
const fieldsOfBody = (body: Buffer): Fields | null => {
  const text = body.toString('utf8');
  return /^[\w%.-]+=/.test(text) ? Object.fromEntries(new URLSearchParams(text)) : null;
};
const without = (field: string) => (r: InboundRequest) => {
  const fields = fieldsOfBody(r.rawBody)!;
  delete fields[field];
  return urlencoded(fields);
};

runAdapterContract({
  adapter: providerB,
  endpoint: { secret: 'TEST_WEBHOOK_SIGNING_KEY' },
  sign: (body, endpoint, at) => {
    const fields = fieldsOfBody(body);
    return fields ? urlencoded(signedFields(fields, endpoint.secret, at)) : { ...urlencoded({}), rawBody: body };
  },
  body: urlencoded(sample(1)).rawBody,
  removeEach: [without('timestamp'), without('token'), without('signature')],
  // Mailgun signs the timestamp and the token, not the fields.
  signsBody: false,
  // Mailgun retries for 8 hours, perhaps with the first try's signature: its retries are taken; 5 minutes of skew ahead.
  maxAgeSeconds: 9 * 3600,
  maxAheadSeconds: 300,
  refusesReplay: true,
  fixtures: [
    {
      name: 'a delivery (sample 1, urlencoded)',
      request: urlencoded(sample(1)),
      events: [
        {
          type: 'delivered',
          recipient: 'recipient@example.com',
          providerMessageId: '20160421175529.19495.89030.B3AE3728@example.com',
          providerEventId: '06c96bafc3f42a66b9edd546347a2fe18dc23461fe80dc52f0',
          occurredAt: '2016-04-21T17:55:30.000Z',
        },
      ],
    },
    { name: 'an open (sample 2, multipart)', request: multipart(sample(2)), events: [{ type: 'opened' }] },
    {
      name: 'a click (sample 3, JSON)',
      request: json(sample(3)),
      events: [
        {
          type: 'clicked',
          url: 'https://example.com/signup',
          providerMessageId: '20160421175529.19495.89030.B3AE3728@example.com',
        },
      ],
    },
    {
      name: 'a bounce with our ids',
      request: urlencoded({
        event: 'bounced',
        token: 't1',
        timestamp: '1',
        recipient: 'a@b.example',
        campaign_message_id: '8',
        campaign_subscriber_id: '9',
      }),
      events: [{ type: 'bounced', bounce: 'hard', messageId: 8, subscriberId: 9 }],
    },
  ],
  echo: (headers) => {
    const variables = JSON.parse(headers['X-Mailgun-Variables']) as Fields;
    return urlencoded({ event: 'opened', token: 'echo', timestamp: '1', recipient: 'a@b.example', ...variables });
  },
});

describe('provider_b: three encodings, one meaning', () => {
  it('reads the same events from urlencoded, multipart and JSON bodies', async () => {
    for (const n of [1, 2, 3]) {
      const [a, b, c] = await Promise.all(
        [urlencoded, multipart, json].map((encode) => providerB.normalize(encode(sample(n)))),
      );
      expect(b, `sample ${n} multipart`).to.deep.equal(a);
      expect(c, `sample ${n} JSON`).to.deep.equal(a);
    }
  });

  it('verifies the samples as Mailgun signed them with TEST_WEBHOOK_SIGNING_KEY, in each encoding', async () => {
    for (const n of [1, 2, 3])
      for (const encode of [urlencoded, multipart, json]) {
        const context = { now: () => new Date(Number(sample(n).timestamp) * 1000), replay: memoryReplayGuard() };
        await providerB.verify(encode(sample(n)), { secret: 'TEST_WEBHOOK_SIGNING_KEY' }, context);
      }
  });
});

describe("provider_b: Mailgun's current JSON webhooks (event-data)", () => {
  const documented = JSON.parse(
    fs.readFileSync(path.join(__dirname, '../../test/fixtures', 'mailgun_failed_documented.json'), 'utf8'),
  ) as { signature: Fields; 'event-data': Record<string, unknown> };
  const secret = 'key-mailgun-signing-key';
  const now = new Date();
  const signedBody = (eventData: Record<string, unknown>): InboundRequest => ({
    rawBody: Buffer.from(JSON.stringify({ signature: signedFields({}, secret, now), 'event-data': eventData })),
    headers: { 'content-type': 'application/json' },
    query: {},
  });
  const context = () => ({ now: () => now, replay: memoryReplayGuard() });

  it('verifies the signature object and reads the documented permanent failure as a hard bounce', async () => {
    const request = signedBody(documented['event-data']);
    await providerB.verify(request, { secret }, context());
    const [event] = await providerB.normalize(request);
    expect(event).to.deep.include({
      type: 'bounced',
      bounce: 'hard',
      recipient: 'alice@example.com',
      providerMessageId: '20130503192659.13651.20287@sandbox4ba2b4b1e2f34ce7a8ae5fcdb4a5b1ef.mailgun.org',
      providerEventId: 'failed:pl271FzxTTmGRW8Uj3dUWw',
    });
    expect(event.occurredAt.toISOString()).to.equal('2018-03-19T15:11:02.908Z');
  });

  it('reads a temporary failure as nothing (Mailgun tries again), our ids from user-variables, and a click with its url', async () => {
    const temporary = await providerB.normalize(signedBody({ ...documented['event-data'], severity: 'temporary' }));
    expect(temporary).to.deep.equal([]);
    const [click] = await providerB.normalize(
      signedBody({
        event: 'clicked',
        id: 'click-1',
        timestamp: 1521472262,
        recipient: 'alice@example.com',
        url: 'https://acme.test/a',
        'user-variables': { campaign_message_id: '12', campaign_subscriber_id: '34' },
      }),
    );
    expect(click).to.deep.include({ type: 'clicked', url: 'https://acme.test/a', messageId: 12, subscriberId: 34 });
    // `bounced`, the name the campaign spec lists for provider_b, in this envelope too: a hard bounce.
    const [bounce] = await providerB.normalize(
      signedBody({ event: 'bounced', id: 'b-1', recipient: 'alice@example.com', timestamp: 1521472262 }),
    );
    expect(bounce).to.deep.include({ type: 'bounced', bounce: 'hard', providerEventId: 'bounced:b-1' });
  });

  it("takes a subaccount's event by its own key only, not by the parent-signature its holder also receives", async () => {
    const timestamp = String(Math.floor(now.getTime() / 1000));
    const token = crypto.randomBytes(25).toString('hex');
    const signature = {
      timestamp,
      token,
      signature: hmacSha256('subaccount-key', timestamp, token).toString('hex'),
      'parent-signature': hmacSha256(secret, timestamp, token).toString('hex'),
    };
    const request: InboundRequest = {
      rawBody: Buffer.from(JSON.stringify({ signature, 'event-data': documented['event-data'] })),
      headers: { 'content-type': 'application/json' },
      query: {},
    };
    await providerB.verify(request, { secret: 'subaccount-key' }, context());
    const refused = await providerB.verify(request, { secret }, context()).then(
      () => null,
      (err: Error & { kind?: string }) => err.kind,
    );
    expect(refused).to.equal('signature');
  });

  it('keeps signed timestamps as recent as its replay guard remembers, and asks it to remember the whole window', async () => {
    const asked: number[] = [];
    const guard = (rememberedSeconds?: number) => ({
      rememberedSeconds,
      seen: async (_key: string, ttlSeconds: number) => (asked.push(ttlSeconds), false),
    });
    const signedAt = (secondsAgo: number): InboundRequest => ({
      rawBody: Buffer.from(
        JSON.stringify({
          signature: signedFields({}, secret, new Date(now.getTime() - secondsAgo * 1000)),
          'event-data': documented['event-data'],
        }),
      ),
      headers: { 'content-type': 'application/json' },
      query: {},
    });
    // Remembered for good (Redis): a retry signed 3 hours before is taken, and its token kept 9 h 5 min.
    await providerB.verify(signedAt(3 * 3600), { secret }, { now: () => now, replay: guard() });
    expect(asked).to.deep.equal([9 * 3600 + 300]);
    // Remembered by this process only: 5 minutes, as a token forgotten at a restart must not verify again.
    await providerB.verify(signedAt(290), { secret }, { now: () => now, replay: guard(300) });
    const stale = await providerB.verify(signedAt(310), { secret }, { now: () => now, replay: guard(300) }).then(
      () => null,
      (err: Error & { kind?: string }) => err.kind,
    );
    expect(stale).to.equal('stale');
  });

  it('refuses the documented body with a signature this endpoint did not make', async () => {
    const request: InboundRequest = {
      rawBody: Buffer.from(
        JSON.stringify({
          ...documented,
          signature: { ...documented.signature, timestamp: String(Math.floor(now.getTime() / 1000)) },
        }),
      ),
      headers: { 'content-type': 'application/json' },
      query: {},
    };
    const refused = await providerB.verify(request, { secret }, context()).then(
      () => null,
      (err: Error & { kind?: string }) => err.kind,
    );
    expect(refused).to.equal('signature');
  });
});

describe('provider_b: bodies anyone may post, before any signature', () => {
  const context = () => ({ now: () => new Date(), replay: memoryReplayGuard() });
  const refusal = (request: InboundRequest) =>
    providerB.verify(request, { secret: 'key' }, context()).then(
      () => null,
      (err: unknown) => err,
    );

  it('refuses a multipart body cut off inside a file part, and the process lives on', async () => {
    const boundary = 'XyZ';
    const body =
      `--${boundary}\r\nContent-Disposition: form-data; name="attachment-1"; filename="m.eml"\r\n` +
      'Content-Type: message/rfc822\r\n\r\nFrom: a\r\n\r\nbody';
    const error = await refusal({
      rawBody: Buffer.from(body),
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
      query: {},
    });
    expect(isProviderError(error), String(error)).to.equal(true);
    // The file part's stream errs a moment later: unheard, it ended the process (and this test run).
    await new Promise((resolve) => setTimeout(resolve, 50));
  });

  it('refuses a JSON body nested too deeply to write back as a 400, not a 500', async () => {
    const depth = 100_000;
    const body = `{"event":"delivered","x":${'['.repeat(depth)}${']'.repeat(depth)}}`;
    const error = await refusal({
      rawBody: Buffer.from(body),
      headers: { 'content-type': 'application/json' },
      query: {},
    });
    expect(isProviderError(error) && error.kind, String(error)).to.equal('malformed');
  });
});
