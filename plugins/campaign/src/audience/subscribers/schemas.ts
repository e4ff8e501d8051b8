import {
  emailSchema,
  idSchema,
  nullableTimestamp,
  pageQueryProperties,
  Shape,
  timestamp,
  Validated,
} from '@switchboard/core';
import { SUBSCRIBER_STATUSES } from '../../shared/subscriber-statuses';
import { metaDataSchema, shownMetaDataSchema } from '../../shared/meta-data';

const text = { type: ['string', 'null'], maxLength: 191 } as const;
const listIds = { type: 'array', items: idSchema, uniqueItems: true, maxItems: 100 } as const;

export const profileProperties = {
  first_name: text,
  last_name: text,
  company_name: text,
  phone: { type: ['string', 'null'], maxLength: 64 },
  job_title: text,
  lists: listIds,
  meta_data: metaDataSchema,
} as const;

export const createSubscriberBody = {
  type: 'object',
  additionalProperties: false,
  required: ['email'],
  properties: {
    email: emailSchema,
    ...profileProperties,
    confirmed: { type: 'boolean', default: true, description: 'false: unconfirmed, and a double opt-in mail is sent' },
  },
} as const;

export const updateSubscriberBody = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: profileProperties,
} as const;

export const unsubscribeBody = {
  type: 'object',
  additionalProperties: false,
  properties: { reason: { type: 'string', maxLength: 191 }, feedback: { type: 'string', maxLength: 5000 } },
} as const;

export const listSubscribersQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ...pageQueryProperties,
    list_id: idSchema,
    status: { enum: SUBSCRIBER_STATUSES, default: 'active' },
    search: { type: 'string', maxLength: 500 },
  },
} as const;

const listItemProperties = {
  id: { type: 'integer' },
  email: { type: 'string' },
  first_name: { type: ['string', 'null'] },
  last_name: { type: ['string', 'null'] },
  company_name: { type: ['string', 'null'] },
  phone: { type: ['string', 'null'] },
  job_title: { type: ['string', 'null'] },
  status: { enum: SUBSCRIBER_STATUSES },
  created_at: timestamp,
  meta_data: shownMetaDataSchema,
} as const;

/** The fields of a subscriber in a list; each is a column of its row. */
export const LIST_ITEM_FIELDS = [
  'id',
  'email',
  'first_name',
  'last_name',
  'company_name',
  'phone',
  'job_title',
  'status',
  'created_at',
  'meta_data',
] as const;

export const subscriberListItemSchema = {
  type: 'object',
  required: [...LIST_ITEM_FIELDS, 'lists'],
  properties: { ...listItemProperties, lists: { type: 'array', items: { type: 'integer' } } },
} as const;

export const subscriberSchema = {
  type: 'object',
  required: [
    ...LIST_ITEM_FIELDS,
    'lists',
    'confirmed_at',
    'unsubscribed_at',
    'messages_received',
    'messages_opened',
    'messages_clicked',
    'updated_at',
  ],
  properties: {
    ...listItemProperties,
    lists: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'name', 'code'],
        properties: { id: { type: 'integer' }, name: { type: 'string' }, code: { type: 'string' } },
      },
    },
    confirmed_at: nullableTimestamp,
    unsubscribed_at: nullableTimestamp,
    messages_received: { type: 'integer' },
    messages_opened: { type: 'integer' },
    messages_clicked: { type: 'integer' },
    updated_at: timestamp,
  },
} as const;

export const createdSubscriberSchema = {
  type: 'object',
  required: ['id', 'email', 'status', 'confirmation_sent'],
  properties: {
    id: { type: 'integer' },
    email: { type: 'string' },
    status: { enum: SUBSCRIBER_STATUSES },
    confirmation_sent: { type: 'boolean' },
  },
} as const;

/** Request and response shapes, derived from the schemas above: one definition gives both. */
/** The profile fields a request may give (all optional): an update, and the rest of a new subscriber. */
export type SubscriberProfile = Validated<typeof updateSubscriberBody>;
export type NewSubscriber = Validated<typeof createSubscriberBody>;
export type SubscriberListQuery = Validated<typeof listSubscribersQuery>;
export type SubscriberListItem = Shape<typeof subscriberListItemSchema>;
export type Subscriber = Shape<typeof subscriberSchema>;
export type CreatedSubscriber = Shape<typeof createdSubscriberSchema>;
