import type { Knex } from 'knex';
import type { SmtpSink } from '@switchboard/core/testing';
import type { CampaignFixture } from './support';

/** A message row as an older version wrote it (upgrade tests: today's API would write today's columns); its id. */
export async function oldMessageRow(knex: Knex, organizationId: number, status = 'draft'): Promise<number> {
  const now = new Date();
  const [id] = await knex('messages').insert({
    organization_id: organizationId,
    name: 'Old',
    subject: 'Old news',
    content_text: 'Hello',
    from_email: 'old@acme.test',
    status,
    created_at: now,
    updated_at: now,
  });
  return Number(id);
}

/** The mails of message `id` the sink got (by its X-Campaign-Message-Id header). */
export const mailsOf = (sink: SmtpSink, id: number) =>
  sink.mails.filter((m) => new RegExp(`^X-Campaign-Message-Id: ${id}\\r?$`, 'im').test(m.raw));

/** A draft with a text part from a@acme.test, plus `fields`. */
export const draftMessage = async (f: CampaignFixture, fields: Record<string, unknown> = {}) =>
  (
    await f
      .api()
      .post('/messages', { name: 'M', subject: 'S', content_text: 'T', from_email: 'a@acme.test', ...fields })
      .expect(201)
  ).body.data.id as number;

/** An inbound webhook endpoint made through the API, as it answered (its secret included). */
export const inboundEndpoint = async (
  f: CampaignFixture,
  fields: { provider: string; name: string; secret?: string },
) => (await f.api().post('/inbound-webhooks', fields).expect(201)).body.data as { id: number; secret: string };

/** The message's latest send as GET /messages/{id} shows it. */
export const deliveryOf = async (f: CampaignFixture, id: number) =>
  (await f.api().get(`/messages/${id}`).expect(200)).body.data.delivery;

/** A draft (with `fields`) sent now to the lists; its id. */
export async function sendNow(f: CampaignFixture, listIds: number[], fields: Record<string, unknown> = {}) {
  const id = await draftMessage(f, fields);
  await f.api().post(`/messages/${id}/send`, { list_ids: listIds }).expect(200);
  return id;
}

/** A new list holding these addresses as active subscribers; its id. */
export async function listOf(f: CampaignFixture, emails: string[], code = 'l'): Promise<number> {
  const list = (await f.api().post('/lists', { name: code, code }).expect(201)).body.data.id as number;
  for (let i = 0; i < emails.length; i += 1000) {
    const subscribers = emails.slice(i, i + 1000).map((email) => ({ email }));
    await f
      .api()
      .post('/subscribers/batch', { subscribers, lists: [list], skip_confirmation: true })
      .expect(200);
  }
  return list;
}

/** A daily schedule of the message to the lists, at most `maxRuns` runs; as the API answered it. */
export const dailySchedule = async (f: CampaignFixture, messageId: number, listIds: number[], maxRuns: number) =>
  (
    await f
      .api()
      .post('/schedules', {
        message_id: messageId,
        frequency: 'daily',
        send_time: '09:00',
        timezone: 'Europe/Berlin',
        max_runs: maxRuns,
        list_ids: listIds,
      })
      .expect(201)
  ).body.data as { id: number } & Record<string, unknown>;

/** The schedule's next run is due now (the workers' claims carry real time: the run moves, not the clock). */
export const makeDue = (f: CampaignFixture, scheduleId: number) =>
  f.engine
    .knex('message_schedules')
    .where({ id: scheduleId })
    .update({ next_run_at: new Date(Date.now() - 1000) });
