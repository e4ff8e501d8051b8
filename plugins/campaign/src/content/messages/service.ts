import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import { rowMapper, Clock, insertedId, ownedRow, paginate, toInt, SERVICES, validationError } from '@switchboard/core';
import { SendStore } from '../../sending';
import { MessageDefaultsService } from '../message-defaults';
import { MessageChanges, MessageListQuery, messageSchema, NewMessage } from './schemas';

/** A percentage of sent mail with two decimals; 0 before anything was sent. */
import { rate } from '../../shared/rates';

const STATS = {
  sent: 'count_sent',
  opened: 'count_read',
  clicked: 'count_clicked',
  unsubscribed: 'count_stop',
  unique_opened: 'unique_opened',
  unique_clicked: 'unique_clicked',
};
const COUNTERS = Object.values(STATS);
const counter = (row: Record<string, unknown>, stat: keyof typeof STATS) => toInt(row[STATS[stat]]);

/**
 * The stats and rates of a message are computed from its counter columns (rates of the mails opened and
 * clicked); every other field is a column.
 */
const toMessage = rowMapper(messageSchema, {
  stats: (row) =>
    Object.fromEntries(Object.keys(STATS).map((stat) => [stat, counter(row, stat as keyof typeof STATS)])),
  open_rate: (row) => rate(counter(row, 'unique_opened'), counter(row, 'sent')),
  click_rate: (row) => rate(counter(row, 'unique_clicked'), counter(row, 'sent')),
  // Read by get() alone: a page of messages does not read their sends.
  delivery: () => null,
});
const COLUMNS = [...toMessage.columns, ...COUNTERS];

const dayStart = (day: string) => new Date(`${day}T00:00:00.000Z`);

@injectable()
export class MessagesService {
  constructor(
    @inject(SERVICES.Knex) private readonly knex: Knex,
    @inject(SERVICES.Clock) private readonly clock: Clock,
    @inject(SendStore) private readonly sends: SendStore,
    @inject(MessageDefaultsService) private readonly defaults: MessageDefaultsService,
  ) {}

  async list(orgId: number, q: MessageListQuery) {
    const filtered = this.knex('messages').where({ organization_id: orgId });
    if (q.status) filtered.andWhere({ status: q.status });
    if (q.from_date) filtered.andWhere('created_at', '>=', dayStart(q.from_date));
    // Through 9999-12-31 is through any time (the day after, year 10000, MariaDB compared wrongly: no message).
    const end = q.to_date ? dayStart(q.to_date).getTime() + 86_400_000 : null;
    if (end !== null && new Date(end).getUTCFullYear() <= 9999) filtered.andWhere('created_at', '<', new Date(end));
    if (q.from_date && q.to_date && q.from_date > q.to_date)
      throw validationError('to_date', 'after_from_date', 'to_date is before from_date');
    return paginate(filtered, q, COLUMNS, toMessage);
  }

  /** With its latest send as `delivery` (recipients, queued, sent, failed while it runs). */
  async get(orgId: number, id: number) {
    const message = toMessage(await ownedRow(this.knex, 'messages', orgId, id, COLUMNS, 'Message'));
    return { ...message, delivery: await this.sends.latestOf(id) };
  }

  /** Tracking not given takes the organization's defaults (message-defaults). */
  async create(orgId: number, input: NewMessage) {
    const now = this.clock.now();
    const id = insertedId(
      await this.knex('messages').insert({
        ...(await this.defaults.get(orgId)),
        ...input,
        organization_id: orgId,
        status: 'draft',
        created_at: now,
        updated_at: now,
      }),
    );
    return this.get(orgId, id);
  }

  /** Only a draft can change: what was sent, or is being sent, stays as it was. */
  async update(orgId: number, id: number, input: MessageChanges) {
    const current = await this.get(orgId, id);
    if (current.status !== 'draft') {
      throw validationError('status', 'draft_only', `Message ${id} is ${current.status}; only a draft can be changed`);
    }
    const updated = await this.knex('messages')
      .where({ organization_id: orgId, id, status: 'draft' })
      .update({ ...input, updated_at: this.clock.now() });
    if (!updated)
      throw validationError('status', 'draft_only', `Message ${id} is no longer a draft; only a draft can be changed`);
    return this.get(orgId, id);
  }

  async delete(orgId: number, id: number): Promise<void> {
    const current = await this.get(orgId, id);
    if (current.status === 'pending' || current.status === 'active') {
      throw validationError('status', 'not_sending', `Message ${id} is being sent; cancel it before deleting it`);
    }
    await this.knex('messages').where({ organization_id: orgId, id }).delete();
  }
}
