import request from 'supertest';
import type { TestTenant } from '@switchboard/core/testing';

/** The kinds of resource an `:id` route of the three plugins addresses. */
export type Kind =
  | 'user'
  | 'project'
  | 'list'
  | 'subscriber'
  | 'senderProfile'
  | 'message'
  | 'schedule'
  | 'webhook'
  | 'inboundWebhook'
  | 'server';

export type Ids = Record<Kind, number>;

/**
 * How an organization creates one resource of each kind through the API, in this order (a project names
 * its owner, a subscriber its list, a schedule its message): the collection's path and the body, given
 * the ids made before it. A message with content, a default sender and a list with a confirmed
 * subscriber could be sent, so that a send or test route that let another organization through would
 * really send.
 */
export const RESOURCES: Array<{ kind: Kind; path: string; body: (made: Partial<Ids>) => object }> = [
  { kind: 'user', path: '/api/v1/users', body: () => ({ name: 'Ada Lovelace', email: 'ada@example.com' }) },
  { kind: 'project', path: '/api/v1/projects', body: (made) => ({ name: 'Apollo', owner_id: made.user }) },
  { kind: 'list', path: '/api/campaign/lists', body: () => ({ name: 'News', code: 'news' }) },
  {
    kind: 'subscriber',
    path: '/api/campaign/subscribers',
    body: (made) => ({ email: 'ada@example.com', first_name: 'Ada', lists: [made.list], confirmed: true }),
  },
  {
    kind: 'senderProfile',
    path: '/api/campaign/sender-profiles',
    body: () => ({ name: 'Main', from_name: 'Acme', from_email: 'hi@acme.test', is_default: true }),
  },
  {
    kind: 'message',
    path: '/api/campaign/messages',
    body: () => ({ name: 'Launch', subject: 'Hello', content_html: '<p>Hello</p>', content_text: 'Hello' }),
  },
  {
    kind: 'schedule',
    path: '/api/campaign/schedules',
    body: (made) => ({
      message_id: made.message,
      frequency: 'daily',
      send_time: '10:00',
      timezone: 'Europe/Berlin',
      list_ids: [made.list],
    }),
  },
  {
    kind: 'webhook',
    path: '/api/campaign/webhooks',
    body: () => ({ name: 'Events', url: 'https://hooks.example.com/events', events: ['sent'] }),
  },
  {
    kind: 'inboundWebhook',
    path: '/api/campaign/inbound-webhooks',
    body: () => ({ provider: 'provider_a', name: 'Bounces' }),
  },
  {
    kind: 'server',
    path: '/api/servermonitor/servers',
    body: () => ({ title: 'Web', endpoint: 'https://www.example.com/health' }),
  },
];

/** One resource of each kind for the tenant; throws naming the kind whose creation was refused. */
export async function createResources(app: Parameters<typeof request>[0], tenant: TestTenant): Promise<Ids> {
  const made: Partial<Ids> = {};
  for (const { kind, path, body } of RESOURCES) {
    const res = await request(app).post(path).set(tenant.auth).send(body(made));
    if (res.status !== 201) throw new Error(`${kind}: POST ${path} answered ${res.status} ${JSON.stringify(res.body)}`);
    made[kind] = res.body.data.id as number;
  }
  return made as Ids;
}
