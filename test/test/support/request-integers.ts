import type { RouteRecord } from '@switchboard/core';

/** An integer a route's request carries: a path or query parameter, or a body member (alone or in an array). */
export interface IntegerField {
  where: 'path' | 'query' | 'body';
  name: string;
  inArray: boolean;
}

/**
 * Spellings that JavaScript's Number() reads as an integer, or as an infinity (which ajv's coercion would let
 * through `type: integer` and `maximum`), but that are not plain decimal digits.
 */
export const LOOSE_INTEGERS = ['0x10', '+1', '01', '%201', '1e3', '%20%201', '1.0', 'Infinity', '-Infinity', '1e400'];

/** What each out-of-range value breaks: text is refused before coercion, JSON numbers by their range. */
export const OUT_OF_RANGE: Array<{ text: string; json?: number; textRule: string; jsonRule?: string }> = [
  { text: '1e308', json: 1e308, textRule: 'pattern', jsonRule: 'maximum' },
  { text: '18446744073709551616', json: 2 ** 64, textRule: 'maximum', jsonRule: 'maximum' },
  // Digits that Number() reads as Infinity, refused as text (JSON cannot carry an infinity, and ajv refuses
  // one in a body as no integer).
  { text: '1'.padEnd(400, '0'), textRule: 'maximum' },
  { text: '-1', json: -1, textRule: 'minimum', jsonRule: 'minimum' },
];

type Schema = { type?: string | string[]; items?: Schema; properties?: Record<string, Schema> };

const typesOf = (schema: Schema | undefined) => (Array.isArray(schema?.type) ? schema.type : [schema?.type]);
const isInteger = (schema: Schema | undefined) => typesOf(schema).includes('integer');

/** Every integer of the route's params, query and body schemas, read from the schemas themselves. */
export function integerFields(route: RouteRecord): IntegerField[] {
  const fields: IntegerField[] = [];
  for (const [where, schema] of [
    ['path', route.spec.params],
    ['query', route.spec.query],
    ['body', route.spec.body],
  ] as const) {
    for (const [name, property] of Object.entries((schema as Schema | undefined)?.properties ?? {})) {
      if (isInteger(property)) fields.push({ where, name, inArray: false });
      else if (typesOf(property).includes('array') && isInteger(property.items))
        fields.push({ where, name, inArray: true });
    }
  }
  return fields;
}

/** `GET /api/campaign/lists/:id`: how tables of per-route inputs name a route. */
export const routeKey = (route: RouteRecord) => `${route.method} ${route.group.options.prefix}${route.path}`;

/** The route's path with its `:id` written as given (trailing slash of a group's root route dropped). */
export const routePath = (route: RouteRecord, id = '1') =>
  (route.group.options.prefix + route.path).replace(/:id/g, id).replace(/\/$/, '');

/**
 * A body each route accepts (its required members), so that a test can spoil one member and see that
 * member refused. Routes not named here are sent `{}` plus the spoiled member.
 */
export const VALID_BODIES: Record<string, object> = {
  'POST /api/campaign/subscribers': { email: 'ada@example.com' },
  'POST /api/campaign/subscribers/batch': { subscribers: [{ email: 'ada@example.com' }] },
  'POST /api/campaign/lists/:id/subscribers': { subscriber_ids: [1] },
  'DELETE /api/campaign/lists/:id/subscribers': { subscriber_ids: [1] },
  'POST /api/campaign/schedules': {
    message_id: 1,
    frequency: 'daily',
    send_time: '10:00',
    timezone: 'Europe/Berlin',
  },
  'POST /api/v1/projects': { name: 'Apollo', owner_id: 1 },
};
