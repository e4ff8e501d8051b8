import type { Knex } from 'knex';

/** Events of our own (not a provider's) recorded beside theirs, so statistics rebuild from records alone. */
export const OWN_PROVIDER = 'switchboard';

/**
 * Records an unsubscribe through a mail's own link as an event of its message: once per message and
 * subscriber. Returns whether this call recorded it (false: recorded before, by an earlier unsubscribe).
 */
export async function recordLinkUnsubscribe(
  trx: Knex.Transaction,
  ids: { organizationId: number; messageId: number; subscriberId: number },
  now: Date,
): Promise<boolean> {
  const key = {
    organization_id: ids.organizationId,
    provider: OWN_PROVIDER,
    provider_event_id: `unsubscribe-link:${ids.messageId}:${ids.subscriberId}`,
  };
  if (await trx('inbound_events').where(key).first('id')) return false;
  await trx('inbound_events').insert({
    ...key,
    webhook_endpoint_id: null,
    message_id: ids.messageId,
    subscriber_id: ids.subscriberId,
    recipient: null,
    event_type: 'unsubscribed',
    bounce: null,
    provider_message_id: null,
    payload: JSON.stringify({ via: 'unsubscribe link' }),
    event_at: now,
    received_at: now,
    receipt: 'unsubscribe-link',
  });
  return true;
}

const ENGAGEMENT_CHUNK = 500;

/**
 * Records every counted open and click (tracked, a provider's, or the open a click implies) by its mail and
 * when it happened: what a rebuild counts `count_read`, `count_clicked` and the timelines from.
 */
export async function recordEngagements(
  trx: Knex.Transaction,
  counted: Array<{ type: string; sendId?: number; subscriberId: number | null; occurredAt: Date }>,
): Promise<void> {
  const rows = counted
    .filter((e) => e.type === 'opened' || e.type === 'clicked')
    .map((e) => ({
      send_id: e.sendId!,
      subscriber_id: e.subscriberId!,
      event_type: e.type,
      occurred_at: e.occurredAt,
    }));
  for (let i = 0; i < rows.length; i += ENGAGEMENT_CHUNK)
    await trx('mail_engagements').insert(rows.slice(i, i + ENGAGEMENT_CHUNK));
}
