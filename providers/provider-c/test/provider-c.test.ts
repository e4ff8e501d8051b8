import fs from 'node:fs';
import path from 'node:path';
import { InboundRequest } from '@switchboard/provider-kit';
import { runAdapterContract } from '@switchboard/provider-kit/contract';
import providerC from '../src';

const fixture = (name: string) => fs.readFileSync(path.join(__dirname, '../../test/fixtures', name));
const json = (body: Buffer | string, headers: Record<string, string> = {}): InboundRequest => ({
  rawBody: Buffer.from(body),
  headers: { 'content-type': 'application/json', ...headers },
  query: {},
});
/** Postmark's documented bounce made a soft one (not suppressing the address). */
const softBounce = () =>
  fixture('postmark_bounce_documented.json')
    .toString()
    .replace('"Type": "HardBounce"', '"Type": "SoftBounce"')
    .replace('"Inactive": true', '"Inactive": false');
const SAME_MAIL_BOUNCE = 'bounced:hard:20130503192659.13651.20287@mg.craftremote.com:bounced-address@wildbit.com';
const SAME_MAIL_COMPLAINT = 'complained:20130503192659.13651.20287@mg.craftremote.com:john@example.com';
const basic = (secret: string) => `Basic ${Buffer.from(secret).toString('base64')}`;

runAdapterContract({
  adapter: providerC,
  endpoint: { secret: 'hooks:s3cret-pass' },
  sign: (body, endpoint) => json(body, { authorization: basic(endpoint.secret) }),
  body: fixture('provider_c_sample1.json'),
  removeEach: [({ headers: { authorization: _, ...headers }, ...rest }) => ({ ...rest, headers })],
  signsBody: false,
  refusesReplay: false,
  fixtures: [
    {
      name: 'a delivery (sample 1)',
      request: json(fixture('provider_c_sample1.json')),
      events: [
        {
          type: 'delivered',
          recipient: 'recipient@example.com',
          providerMessageId: '883953f4-6105-42a2-a16a-77a8eac79483',
          messageId: null,
          subscriberId: null,
          occurredAt: '2014-08-01T17:28:10.273Z',
        },
      ],
    },
    {
      name: 'a hard bounce (sample 2)',
      request: json(fixture('provider_c_sample2.json')),
      events: [
        {
          type: 'bounced',
          bounce: 'hard',
          recipient: 'john@example.com',
          // A mail's hard bounce is keyed by the mail and its recipient (Postmark tells it twice, below).
          providerEventId: 'bounced:hard:883953f4-6105-42a2-a16a-77a8eac79483:john@example.com',
          occurredAt: '2019-11-05T16:33:54.907Z',
        },
      ],
    },
    {
      // Postmark's own example (fixtures/README.md) as a soft bounce, which keeps its bounce ID: a 64-bit ID
      // keeps its digits.
      name: "a soft bounce as Postmark's documentation shows it, its 64-bit ID kept",
      request: json(softBounce()),
      events: [{ type: 'bounced', bounce: 'soft', providerEventId: 'Bounce:4323372036854775807' }],
    },
    {
      name: 'a block, the address kept active: soft',
      idsRepeat: true,
      request: json(softBounce().replace('"Type": "SoftBounce"', '"Type": "Blocked"')),
      events: [{ type: 'bounced', bounce: 'soft' }],
    },
    {
      name: 'a DMARC rejection, the address kept active: soft',
      idsRepeat: true,
      request: json(softBounce().replace('"Type": "SoftBounce"', '"Type": "DMARCPolicy"')),
      events: [{ type: 'bounced', bounce: 'soft' }],
    },
    {
      name: 'a block that made Postmark deactivate the address: hard',
      idsRepeat: true,
      request: json(
        softBounce()
          .replace('"Type": "SoftBounce"', '"Type": "Blocked"')
          .replace('"Inactive": false', '"Inactive": true'),
      ),
      events: [{ type: 'bounced', bounce: 'hard' }],
    },
    {
      name: 'the next soft bounce: an ID one more, another event (a JavaScript number would make them equal)',
      request: json(softBounce().replace('4323372036854775807', '4323372036854775808')),
      events: [{ type: 'bounced', bounce: 'soft', providerEventId: 'Bounce:4323372036854775808' }],
    },
    {
      name: 'the hard bounce told again as a SubscriptionChange (Mailcoach stub): the same event id',
      request: json(fixture('mailcoach_subscription_change_bounce.json')),
      events: [{ type: 'bounced', bounce: 'hard', providerEventId: SAME_MAIL_BOUNCE }],
    },
    {
      name: 'its Bounce record, the address in capitals: the same event id',
      idsRepeat: true,
      request: json(
        fixture('provider_c_sample2.json')
          .toString()
          .replace('883953f4-6105-42a2-a16a-77a8eac79483', '20130503192659.13651.20287@mg.craftremote.com')
          .replace('john@example.com', 'Bounced-Address@wildbit.com'),
      ),
      events: [{ type: 'bounced', bounce: 'hard', providerEventId: SAME_MAIL_BOUNCE }],
    },
    {
      name: 'a complaint and its SubscriptionChange (Mailcoach stubs): one event id',
      request: json(fixture('mailcoach_complaint.json')),
      events: [{ type: 'complained', providerEventId: SAME_MAIL_COMPLAINT }],
    },
    {
      name: "the complaint's SubscriptionChange",
      idsRepeat: true,
      request: json(
        fixture('mailcoach_subscription_change_complaint.json')
          .toString()
          .replace('bounced-address@wildbit.com', 'john@example.com'),
      ),
      events: [{ type: 'complained', providerEventId: SAME_MAIL_COMPLAINT }],
    },
    {
      name: 'a soft bounce (sample 3)',
      request: json(fixture('provider_c_sample3.json')),
      events: [{ type: 'bounced', bounce: 'soft', providerMessageId: '00000000-1111-2222-3333-444444444444' }],
    },
    {
      name: 'an unsubscribe (SubscriptionChange, manual suppression) with our ids',
      request: json(
        JSON.stringify({
          RecordType: 'SubscriptionChange',
          MessageID: 'm-1',
          Recipient: 'ada@example.com',
          ChangedAt: '2026-02-01T10:00:00Z',
          SuppressSending: true,
          SuppressionReason: 'ManualSuppression',
          Metadata: { campaign_message_id: '12', campaign_subscriber_id: '34' },
        }),
      ),
      events: [
        {
          type: 'unsubscribed',
          recipient: 'ada@example.com',
          messageId: 12,
          subscriberId: 34,
        },
      ],
    },
    {
      name: 'a click with its link',
      request: json(
        JSON.stringify({
          RecordType: 'Click',
          MessageID: 'm-2',
          Recipient: 'ada@example.com',
          ReceivedAt: '2026-02-01T10:00:00Z',
          OriginalLink: 'https://acme.example/a',
        }),
      ),
      events: [{ type: 'clicked', url: 'https://acme.example/a', occurredAt: '2026-02-01T10:00:00.000Z' }],
    },
    {
      name: 'a resubscribe and an auto-reply: no event',
      request: json(JSON.stringify({ RecordType: 'SubscriptionChange', SuppressSending: false, Recipient: 'a@b.c' })),
      events: [],
    },
  ],
  echo: (headers) => {
    const metadata = Object.fromEntries(
      Object.entries(headers).map(([name, value]) => [name.replace(/^X-PM-Metadata-/i, ''), value]),
    );
    return json(
      JSON.stringify({
        RecordType: 'Open',
        MessageID: 'm-3',
        Recipient: 'ada@example.com',
        ReceivedAt: '2026-02-01T10:00:00Z',
        Metadata: metadata,
      }),
    );
  },
});
