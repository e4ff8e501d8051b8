import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import { placeholders, selectText, SERVICES, toInt } from '@switchboard/core';
import type { NormalizedEvent } from '@switchboard/provider-kit';
import { normalizeEmail } from '../shared/email';

/** An event and the organization whose endpoint received it. */
export interface ReceivedEvent {
  organizationId: number;
  event: NormalizedEvent;
}

/** Our Message-ID (sending/send-worker.ts): send id, subscriber id and message id, then our host. */
const OUR_MAIL_ID = /^(\d{1,10})\.(\d{1,10})\.(\d{1,10})@/;
const CHUNK = 500;

const chunks = <T>(all: T[]): T[][] =>
  Array.from({ length: Math.ceil(all.length / CHUNK) }, (_, i) => all.slice(i * CHUNK, (i + 1) * CHUNK));
const orgKey = (organizationId: number, value: string | number) => `${organizationId}\u0000${value}`;

/**
 * Finds the message and subscriber of each event, within the organization that received it (another
 * organization's ids are dropped): our ids where the mail carried them back, else the mail the
 * provider's message id names (our Message-ID, or the id the relay answered the send with), else the
 * subscriber of the recipient address. A query per kind of link for all the events together.
 */
@injectable()
export class EventLinker {
  constructor(@inject(SERVICES.Knex) private readonly knex: Knex) {}

  async link(received: ReceivedEvent[]): Promise<ReceivedEvent[]> {
    const { messages, subscribers } = await this.owned(received);
    let linked = received.map((r) => {
      const { organizationId, event } = r;
      const messageId =
        event.messageId !== null && messages.has(orgKey(organizationId, event.messageId)) ? event.messageId : null;
      const subscriberId =
        event.subscriberId !== null && subscribers.has(orgKey(organizationId, event.subscriberId))
          ? event.subscriberId
          : null;
      // Copied only when an id is dropped (most events name ids of their own organization).
      return messageId === event.messageId && subscriberId === event.subscriberId
        ? r
        : { organizationId, event: { ...event, messageId, subscriberId } };
    });
    linked = await this.byMail(linked);
    return this.byAddress(linked);
  }

  /**
   * The messages and subscribers among those named that belong to the organization naming them: one
   * query for both tables (a run's every statement counts at a thousand requests a second).
   */
  private async owned(received: ReceivedEvent[]): Promise<{ messages: Set<string>; subscribers: Set<string> }> {
    const named = (id: (e: NormalizedEvent) => number | null) => [
      ...new Set(received.map((r) => id(r.event)).filter((n) => n !== null)),
    ];
    const ids = { messages: named((e) => e.messageId), subscribers: named((e) => e.subscriberId) };
    const found = { messages: new Set<string>(), subscribers: new Set<string>() };
    const statements = Math.max(chunks(ids.messages).length, chunks(ids.subscribers).length);
    for (let i = 0; i < statements; i++) {
      const [messages, subscribers] = [ids.messages, ids.subscribers].map((all) =>
        all.slice(i * CHUNK, (i + 1) * CHUNK),
      );
      const tables = (
        [
          ['messages', messages],
          ['subscribers', subscribers],
        ] as const
      ).filter(([, part]) => part.length);
      const sql = tables
        .map(
          ([table, part]) =>
            `select \`id\`, \`organization_id\`, '${table}' as \`kind\` from \`${table}\` where \`id\` in (${placeholders(part.length)})`,
        )
        .join(' union all ');
      for (const r of await selectText(
        this.knex,
        sql,
        tables.flatMap(([, part]) => part),
      ))
        found[r.kind as 'messages' | 'subscribers'].add(orgKey(toInt(r.organization_id), toInt(r.id)));
    }
    return found;
  }

  /**
   * Events without our ids, linked to the mail they name: our Message-ID (in the provider's message id or the
   * mail's Message-ID header it reports), else the id the relay answered the send with.
   */
  private async byMail(received: ReceivedEvent[]): Promise<ReceivedEvent[]> {
    const namesOf = (r: ReceivedEvent) =>
      [r.event.providerMessageId, r.event.messageIdHeader].filter((id): id is string => !!id);
    const wanting = received.filter(
      (r) => (r.event.messageId === null || r.event.subscriberId === null) && namesOf(r).length,
    );
    if (!wanting.length) return received;
    const mails = new Map<string, { messageId: number; subscriberId: number }>();
    const names = wanting.flatMap((r) => namesOf(r).map((name) => ({ organizationId: r.organizationId, name })));
    const pairs = names
      .filter((n) => OUR_MAIL_ID.test(n.name))
      .map((n) => {
        const [, send, subscriber] = OUR_MAIL_ID.exec(n.name)!;
        return [Number(send), Number(subscriber)];
      });
    for (const part of chunks(pairs))
      for (const r of await this.knex('send_recipients as r')
        .join('message_sends as s', 's.id', 'r.send_id')
        .whereIn(['r.send_id', 'r.subscriber_id'], part)
        .select('s.organization_id', 's.message_id', 'r.subscriber_id', 'r.mail_id'))
        if (r.mail_id !== null)
          mails.set(orgKey(toInt(r.organization_id), String(r.mail_id)), {
            messageId: toInt(r.message_id),
            subscriberId: toInt(r.subscriber_id),
          });
    const relayed = names.filter((n) => !OUR_MAIL_ID.test(n.name));
    const organizations = [...new Set(relayed.map((n) => n.organizationId))];
    for (const part of chunks([...new Set(relayed.map((n) => n.name))]))
      for (const r of await this.knex('send_relay_ids as x')
        .join('message_sends as s', 's.id', 'x.send_id')
        .whereIn('x.organization_id', organizations)
        .whereIn('x.relay_id', part)
        .select('x.organization_id', 'x.relay_id', 's.message_id', 'x.subscriber_id'))
        mails.set(orgKey(toInt(r.organization_id), String(r.relay_id)), {
          messageId: toInt(r.message_id),
          subscriberId: toInt(r.subscriber_id),
        });
    return received.map((r) => {
      const mail = namesOf(r)
        .map((name) => mails.get(orgKey(r.organizationId, name)))
        .find(Boolean);
      if (!mail) return r;
      return {
        ...r,
        event: {
          ...r.event,
          messageId: r.event.messageId ?? mail.messageId,
          subscriberId: r.event.subscriberId ?? mail.subscriberId,
        },
      };
    });
  }

  /** Events still without a subscriber, linked to the subscriber of their recipient address. */
  private async byAddress(received: ReceivedEvent[]): Promise<ReceivedEvent[]> {
    const wanting = received.filter((r) => r.event.subscriberId === null && r.event.recipient);
    if (!wanting.length) return received;
    const organizations = [...new Set(wanting.map((r) => r.organizationId))];
    const byEmail = new Map<string, number>();
    for (const part of chunks([...new Set(wanting.map((r) => normalizeEmail(r.event.recipient!)))]))
      for (const r of await this.knex('subscribers')
        .whereIn('organization_id', organizations)
        .whereIn('email', part)
        .select('id', 'email', 'organization_id'))
        byEmail.set(orgKey(toInt(r.organization_id), String(r.email)), toInt(r.id));
    return received.map((r) =>
      r.event.subscriberId === null && r.event.recipient
        ? {
            ...r,
            event: {
              ...r.event,
              subscriberId: byEmail.get(orgKey(r.organizationId, normalizeEmail(r.event.recipient))) ?? null,
            },
          }
        : r,
    );
  }
}
