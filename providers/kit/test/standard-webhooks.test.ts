import crypto from 'node:crypto';
import { expect } from 'chai';
import { Webhook } from 'standardwebhooks';
import { otherSecret } from '../src/contract';
import {
  checkSignedTime,
  isProviderError,
  keyOfSecret,
  standardWebhookHeaders,
  verifyStandardWebhook,
  whsecOf,
  type InboundRequest,
} from '../src';

const NOW = new Date('2026-11-27T12:00:00Z');
const WINDOW = { maxAgeSeconds: 300, maxAheadSeconds: 300 };
const secret = whsecOf(crypto.randomBytes(24));
const body = '{"type":"email.delivered","data":{"email_id":"4ef9a417"}}';

const request = (headers: Record<string, string>, raw = body): InboundRequest => ({
  rawBody: Buffer.from(raw),
  headers,
  query: {},
});

/** What verifying answers: the delivery's id, or the kind of refusal. */
const outcome = (req: InboundRequest, options: { secret?: string; prefix?: 'svix' } = {}) => {
  try {
    return verifyStandardWebhook(req, {
      secret: options.secret ?? secret,
      now: NOW,
      window: WINDOW,
      prefix: options.prefix,
    }).id;
  } catch (err) {
    if (isProviderError(err)) return err.kind;
    throw err;
  }
};

describe('provider kit: Standard Webhooks (Svix) verification, checked against the standardwebhooks library', () => {
  it('verifies what the library signs, and the library verifies what the kit signs', () => {
    const signature = new Webhook(secret).sign('msg_1', NOW, body);
    const at = String(NOW.getTime() / 1000);
    expect(
      outcome(request({ 'webhook-id': 'msg_1', 'webhook-timestamp': at, 'webhook-signature': signature })),
    ).to.equal('msg_1');
    // Svix's header names, and a list of signatures while a key is rotated.
    const svix = { 'svix-id': 'msg_1', 'svix-timestamp': at, 'svix-signature': `v1,bm90LWl0 ${signature}` };
    expect(outcome(request(svix), { prefix: 'svix' })).to.equal('msg_1');

    // A secret shown without `whsec_` is the same base64, as the library reads it.
    const bare = secret.slice('whsec_'.length);
    const bareSigned = {
      'webhook-id': 'msg_3',
      'webhook-timestamp': at,
      'webhook-signature': new Webhook(bare).sign('msg_3', NOW, body),
    };
    expect(outcome(request(bareSigned), { secret: bare })).to.equal('msg_3');

    const headers = standardWebhookHeaders(keyOfSecret(secret), 'msg_2', new Date(), body);
    expect(() => new Webhook(secret).verify(body, headers)).to.not.throw();
  });

  it('refuses another secret, a changed body or id, a missing header, and a stale or unreadable timestamp', () => {
    const at = String(NOW.getTime() / 1000);
    const signed = (id: string, timestamp: string) => ({
      'webhook-id': id,
      'webhook-timestamp': timestamp,
      'webhook-signature': new Webhook(secret).sign(id, new Date(Number(timestamp) * 1000), body),
    });
    expect(outcome(request(signed('msg_1', at)), { secret: otherSecret(secret) })).to.equal('signature');
    expect(outcome(request(signed('msg_1', at), body.replace('delivered', 'bounced')))).to.equal('signature');
    expect(outcome(request({ ...signed('msg_1', at), 'webhook-id': 'msg_2' }))).to.equal('signature');
    for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) {
      const { [name]: _left, ...rest } = signed('msg_1', at) as Record<string, string>;
      expect(outcome(request(rest)), name).to.equal('signature');
    }
    expect(outcome(request(signed('msg_1', String(Number(at) - 301))))).to.equal('stale');
    expect(outcome(request(signed('msg_1', String(Number(at) + 301))))).to.equal('stale');
    expect(outcome(request({ ...signed('msg_1', at), 'webhook-timestamp': `${at}.5` }))).to.equal('malformed');
    // Only v1 signatures count.
    const v1 = signed('msg_1', at)['webhook-signature'];
    expect(outcome(request({ ...signed('msg_1', at), 'webhook-signature': v1.replace('v1,', 'v2,') }))).to.equal(
      'signature',
    );
  });

  it('tells an unreadable timestamp (malformed) from one out of the window (stale)', () => {
    for (const timestamp of ['abc', '', ' 1772366400', '1772366400.5', '-5'])
      expect(() => checkSignedTime(timestamp, NOW, WINDOW), timestamp)
        .to.throw('is not a whole number of seconds')
        .with.property('kind', 'malformed');
    expect(() => checkSignedTime('1000', NOW, WINDOW))
      .to.throw('more than 300 s before now')
      .with.property('kind', 'stale');
  });

  it("makes the contract suite's other secret of the same shape: base64 and hex still decode, to other bytes", () => {
    for (const given of [secret, 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'deadbeef00', 'f-token', 'zZ9'])
      expect(otherSecret(given), given).to.have.length(given.length).and.not.equal(given);
    const base64 = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw=';
    expect(keyOfSecret(otherSecret(base64)).equals(keyOfSecret(base64))).to.equal(false);
    expect(otherSecret('--')).to.equal('---other');
    // Hex stays hex (f goes round to 0), in its case.
    expect(otherSecret('ffffffffffffffff')).to.equal('ffffffff0fffffff');
    expect(otherSecret('DEADBEEF')).to.equal('DEADCEEF');
  });
});
