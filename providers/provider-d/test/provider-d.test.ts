import crypto from 'node:crypto';
import fs from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { expect } from 'chai';
import { InboundRequest, isProviderError, memoryReplayGuard } from '@switchboard/provider-kit';
import { runAdapterContract } from '@switchboard/provider-kit/contract';
import MessageValidator from 'sns-validator';
import providerD, { subscribeUrlToConfirm } from '../src';
import { snsTestSigner, TEST_CERT_URL } from '../src/testing';

const signer = snsTestSigner();
const { certificate } = signer;
const CERT_URL = TEST_CERT_URL;
const TOPIC = 'arn:aws:sns:us-east-1:123456789012:ses-events';
const fetched: string[] = [];
const context = {
  fetchText: async (url: string) => {
    fetched.push(url);
    if (url !== CERT_URL) throw new Error(`unexpected fetch of ${url}`);
    return certificate;
  },
};
const fixture = (n: number) =>
  JSON.parse(
    fs.readFileSync(path.join(__dirname, '../../test/fixtures', `provider_d_sample${n}.json`), 'utf8'),
  ) as Record<string, unknown>;
const request = (body: unknown): InboundRequest => ({
  rawBody: Buffer.isBuffer(body) ? body : Buffer.from(JSON.stringify(body)),
  headers: { 'content-type': 'text/plain; charset=UTF-8' },
  query: {},
});
const signEnvelope = (envelope: Record<string, unknown>, version: '1' | '2' = '2', key?: string) =>
  signer.sign(envelope, version, key);
const endpoint = { secret: 'unused', options: { topicArns: [TOPIC] } };
const notification = (event: Record<string, unknown>, id = crypto.randomUUID()) => ({
  Type: 'Notification',
  MessageId: id,
  TopicArn: TOPIC,
  Message: JSON.stringify(event),
  Timestamp: '2026-03-01T12:00:00.000Z',
});
const withTopic = (n: number) => ({ ...fixture(n), TopicArn: TOPIC });
const without = (field: string) => (r: InboundRequest) => {
  const envelope = JSON.parse(r.rawBody.toString('utf8')) as Record<string, unknown>;
  delete envelope[field];
  return request(envelope);
};

runAdapterContract({
  adapter: providerD,
  endpoint,
  sign: (body) => {
    let envelope: unknown;
    try {
      envelope = JSON.parse(body.toString('utf8'));
    } catch {
      return request(body);
    }
    return typeof envelope === 'object' && envelope !== null && !Array.isArray(envelope)
      ? request(signEnvelope({ TopicArn: TOPIC, ...(envelope as Record<string, unknown>) }))
      : request(body);
  },
  body: Buffer.from(JSON.stringify(withTopic(2))),
  removeEach: [without('Signature'), without('SignatureVersion'), without('SigningCertURL')],
  signsBody: true,
  refusesReplay: false,
  // AWS signs with its certificate's key; another signer is refused below.
  signsWithSecret: false,
  context,
  fixtures: [
    { name: 'a subscription confirmation (sample 1): no event', request: request(fixture(1)), events: [] },
    {
      name: 'a permanent bounce (sample 2)',
      request: request(fixture(2)),
      events: [
        {
          type: 'bounced',
          bounce: 'hard',
          recipient: 'recipient@example.com',
          messageId: null,
          occurredAt: '2017-08-05T00:41:02.669Z',
        },
      ],
    },
    {
      name: 'a complaint (sample 3)',
      request: request(fixture(3)),
      events: [{ type: 'complained', recipient: 'complaint@simulator.amazonses.com' }],
    },
    {
      name: 'a delivery to two, with our tags',
      request: request(
        notification({
          eventType: 'Delivery',
          mail: {
            messageId: 'ses-1',
            timestamp: '2026-01-01T00:00:00Z',
            tags: { campaign_message_id: ['3'], campaign_subscriber_id: ['4'] },
          },
          delivery: { timestamp: '2026-01-01T00:00:05Z', recipients: ['a@b.example', 'c@d.example'] },
        }),
      ),
      events: [
        {
          type: 'delivered',
          recipient: 'a@b.example',
          messageId: 3,
          subscriberId: 4,
          providerMessageId: 'ses-1',
          occurredAt: '2026-01-01T00:00:05.000Z',
        },
        { type: 'delivered', recipient: 'c@d.example' },
      ],
    },
    {
      name: 'a Reject (dropped), a transient bounce (soft) and a click',
      request: request(
        notification({
          eventType: 'Reject',
          mail: { messageId: 'ses-2', destination: ['a@b.example'] },
          reject: { reason: 'Bad content' },
        }),
      ),
      events: [{ type: 'dropped', recipient: 'a@b.example' }],
    },
    {
      name: 'a transient bounce',
      request: request(
        notification({
          notificationType: 'Bounce',
          mail: { messageId: 'ses-3' },
          bounce: { bounceType: 'Transient', bouncedRecipients: [{ emailAddress: 'a@b.example' }] },
        }),
      ),
      events: [{ type: 'bounced', bounce: 'soft' }],
    },
    {
      name: "a complaint the reporter takes back (feedback type not-spam, SES's notification contents): no event",
      request: request(
        notification({
          notificationType: 'Complaint',
          mail: { messageId: 'ses-5', destination: ['a@b.example'] },
          complaint: { complainedRecipients: [{ emailAddress: 'a@b.example' }], complaintFeedbackType: 'not-spam' },
        }),
      ),
      events: [],
    },
    {
      name: 'a complaint of abuse',
      request: request(
        notification({
          notificationType: 'Complaint',
          mail: { messageId: 'ses-6', destination: ['a@b.example'] },
          complaint: { complainedRecipients: [{ emailAddress: 'a@b.example' }], complaintFeedbackType: 'abuse' },
        }),
      ),
      events: [{ type: 'complained', recipient: 'a@b.example' }],
    },
    {
      name: 'a click with its link',
      request: request(
        notification({
          eventType: 'Click',
          mail: { messageId: 'ses-4', destination: ['a@b.example'] },
          click: { link: 'https://a.example', timestamp: '2026-01-02T00:00:00Z' },
        }),
      ),
      events: [{ type: 'clicked', url: 'https://a.example', occurredAt: '2026-01-02T00:00:00.000Z' }],
    },
    {
      name: "SES's plain-text validation notice: no event",
      request: request({
        ...notification({}),
        Message: 'Successfully validated SNS topic for Amazon SES event publishing.',
      }),
      events: [],
    },
  ],
  echo: (headers) => {
    const tags = Object.fromEntries(
      headers['X-SES-MESSAGE-TAGS'].split(',').map((pair) => {
        const [name, value] = pair.trim().split('=');
        return [name, [value]];
      }),
    );
    return request(
      notification({ eventType: 'Open', mail: { messageId: 'ses-5', destination: ['a@b.example'], tags } }),
    );
  },
});

describe('provider_d: SNS signatures, certificates, topics and subscriptions', () => {
  const verify = (envelope: Record<string, unknown>, on = endpoint) =>
    providerD.verify(request(envelope), on, { now: () => new Date(), replay: memoryReplayGuard(), ...context }).then(
      () => null,
      (err: unknown) => err,
    );

  it('verifies versions 1 and 2, fetching each certificate once', async () => {
    const before = fetched.length;
    expect(await verify(signEnvelope(withTopic(2), '1'))).to.equal(null);
    expect(await verify(signEnvelope(withTopic(3), '2'))).to.equal(null);
    expect(fetched.length - before).to.be.at.most(1);
  });

  it('refuses a message signed with a key other than the certificate', async () => {
    const other = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    const error = await verify(
      signEnvelope(withTopic(2), '2', other.export({ type: 'pkcs8', format: 'pem' }) as string),
    );
    expect(isProviderError(error) && error.kind).to.equal('signature');
  });

  it('refuses a certificate URL that is not Amazon SNS without fetching it, and a topic not allowed', async () => {
    const before = fetched.length;
    for (const url of [
      'http://sns.us-east-1.amazonaws.com/cert.pem',
      'https://sns.us-east-1.amazonaws.com.evil.example/cert.pem',
      'https://evil.example/sns.us-east-1.amazonaws.com/cert.pem',
      'https://sns.us-east-1.amazonaws.com/cert.txt',
      'https://sns.us-east-1.amazonaws.com:8443/cert.pem',
    ]) {
      const error = await verify({ ...signEnvelope(withTopic(2)), SigningCertURL: url });
      expect(isProviderError(error) && error.kind, url).to.equal('forbidden');
    }
    expect(fetched.length).to.equal(before);
    const otherTopic = await verify(signEnvelope({ ...withTopic(2), TopicArn: 'arn:aws:sns:us-east-1:1:other' }));
    expect(isProviderError(otherTopic) && otherTopic.kind).to.equal('forbidden');
    const noList = await verify(signEnvelope(withTopic(2)), { secret: 'x', options: {} } as never);
    expect(isProviderError(noList) && noList.kind).to.equal('forbidden');
  });

  it('refuses a topic that is no text as not allowed, without reading it as text', async () => {
    const error = await verify({ ...signEnvelope(withTopic(2)), TopicArn: { toString: 1 } });
    expect(isProviderError(error) && error.kind, String(error)).to.equal('forbidden');
  });

  it('refuses a message whose certificate URL answers something that is no certificate', async () => {
    const url = 'https://sns.us-east-1.amazonaws.com/not-a-certificate.pem';
    const error = await providerD
      .verify(request({ ...signEnvelope(withTopic(2)), SigningCertURL: url }), endpoint, {
        now: () => new Date(),
        replay: memoryReplayGuard(),
        fetchText: async () => '<html>Service Unavailable</html>',
      })
      .then(
        () => null,
        (err: unknown) => err,
      );
    expect(isProviderError(error) && error.kind, String(error)).to.equal('signature');
  });

  it('gives the SubscribeURL of a confirmation to visit only when it is Amazon SNS', () => {
    expect(subscribeUrlToConfirm(request(fixture(1)))).to.match(/^https:\/\/sns\.us-west-2\.amazonaws\.com\//);
    expect(subscribeUrlToConfirm(request(fixture(2)))).to.equal(null);
    expect(() =>
      subscribeUrlToConfirm(request({ ...fixture(1), SubscribeURL: 'https://evil.example/confirm' })),
    ).to.throw('SubscribeURL is not Amazon SNS');
  });
});

describe("provider_d: AWS's sns-validator as the examiner", () => {
  // sns-validator reads the certificate with https.get; here it gets the test certificate, and nothing is
  // connected to (any other URL fails the test).
  const realGet = https.get;
  const asked: string[] = [];
  before(() => {
    (https as { get: unknown }).get = (url: string, answer: (res: PassThrough & { statusCode: number }) => void) => {
      asked.push(String(url));
      if (String(url) !== CERT_URL) throw new Error(`sns-validator asked for ${url}`);
      const res = Object.assign(new PassThrough(), { statusCode: 200 });
      process.nextTick(() => {
        answer(res);
        res.end(certificate);
      });
      return new PassThrough();
    };
  });
  after(() => {
    (https as { get: unknown }).get = realGet;
  });
  const validator = new MessageValidator();
  const theirs = (envelope: Record<string, unknown>) =>
    new Promise<Error | null>((resolve) => validator.validate(envelope, (err: Error | null) => resolve(err)));
  const ours = (envelope: Record<string, unknown>) =>
    providerD
      .verify(request(envelope), endpoint, { now: () => new Date(), replay: memoryReplayGuard(), ...context })
      .then(
        () => null,
        (err: unknown) => err,
      );

  it('agrees with ours on the fixtures signed (versions 1 and 2), and on a changed message', async () => {
    for (const [n, version] of [
      [1, '1'],
      [2, '1'],
      [2, '2'],
      [3, '2'],
    ] as const) {
      const envelope = signEnvelope(withTopic(n), version);
      expect(await theirs(envelope), `sample ${n}, version ${version}`).to.equal(null);
      expect(await ours(envelope), `sample ${n}, version ${version}`).to.equal(null);
      const changed = { ...envelope, Message: `${String(envelope.Message)} ` };
      expect(await theirs(changed), `changed sample ${n}`).to.be.instanceOf(Error);
      expect(isProviderError(await ours(changed)) && 'refused', `changed sample ${n}`).to.equal('refused');
    }
    expect(new Set(asked)).to.deep.equal(new Set([CERT_URL]));
  });
});
