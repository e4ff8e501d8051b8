import { expect } from 'chai';
import { describeEachBackend, createTenant } from '@switchboard/core/testing';
import { campaignFixture, CampaignFixture } from '../../../shared/tests/support';

describeEachBackend('campaign: messages', (backend) => {
  let f: CampaignFixture;
  before(async () => {
    f = await campaignFixture(backend());
  });
  after(() => f.close());

  const draft = {
    name: 'Spring news',
    subject: 'What is new',
    preheader: 'In short',
    content_html: '<p>Hi</p>',
    content_text: 'Hi',
    from_name: 'Acme',
    from_email: 'news@acme.example',
  };

  it('creates a draft and reads it with stats and rates', async () => {
    const created = await f.api().post('/messages', draft).expect(201);
    expect(created.body.data).to.deep.include({
      ...draft,
      status: 'draft',
      sent_at: null,
      stats: { sent: 0, opened: 0, clicked: 0, unsubscribed: 0, unique_opened: 0, unique_clicked: 0 },
      open_rate: 0,
      click_rate: 0,
    });
    const id = created.body.data.id;
    await f.engine.knex('messages').where({ id }).update({
      count_sent: 200,
      count_read: 90,
      count_clicked: 9,
      count_stop: 1,
      unique_opened: 50,
      unique_clicked: 7,
    });
    const read = await f.api().get(`/messages/${id}`).expect(200);
    // Rates are of the mails opened and clicked, not of every open and click.
    expect(read.body.data).to.deep.include({
      stats: { sent: 200, opened: 90, clicked: 9, unsubscribed: 1, unique_opened: 50, unique_clicked: 7 },
      open_rate: 25,
      click_rate: 3.5,
    });
  });

  it('validates required fields and the from address', async () => {
    const missing = await f.api().post('/messages', { subject: 'x' }).expect(422);
    expect(missing.body.error.details).to.deep.equal({ field: 'name', rule: 'required' });
    const from = await f.api().post('/messages', { name: 'x', subject: 'x', from_email: 'nope' }).expect(422);
    expect(from.body.error.details.field).to.equal('from_email');
  });

  it('updates a draft only', async () => {
    const id = (await f.api().post('/messages', draft).expect(201)).body.data.id;
    const updated = await f.api().put(`/messages/${id}`, { subject: 'Better subject' }).expect(200);
    expect(updated.body.data.subject).to.equal('Better subject');
    await f.engine.knex('messages').where({ id }).update({ status: 'sent', sent_at: new Date() });
    const refused = await f.api().put(`/messages/${id}`, { subject: 'Too late' }).expect(422);
    expect(refused.body.error).to.deep.include({
      code: 'VALIDATION_ERROR',
      details: { field: 'status', rule: 'draft_only' },
    });
    expect(refused.body.error.message).to.contain('only a draft can be changed');
  });

  it('filters by status and creation dates, paginated', async () => {
    const org = await createTenant(f.engine, { name: 'Dates' });
    const ids: number[] = [];
    for (const day of ['2026-01-10', '2026-02-10', '2026-03-10']) {
      const id = (await f.api(org).post('/messages', { name: day, subject: day }).expect(201)).body.data.id;
      await f.engine
        .knex('messages')
        .where({ id })
        .update({ created_at: new Date(`${day}T12:00:00Z`) });
      ids.push(id);
    }
    await f.engine.knex('messages').where({ id: ids[2] }).update({ status: 'sent' });
    const names = async (q: string) =>
      (await f.api(org).get(`/messages?${q}`).expect(200)).body.data.map((m: { name: string }) => m.name);
    expect(await names('from_date=2026-02-01')).to.deep.equal(['2026-02-10', '2026-03-10']);
    expect(await names('to_date=2026-02-10')).to.deep.equal(['2026-01-10', '2026-02-10']);
    expect(await names('from_date=2026-02-01&to_date=2026-02-28')).to.deep.equal(['2026-02-10']);
    // The last day a date has: through it is through any time (the day after it, year 10000, matched no row on MariaDB).
    expect(await names('from_date=2026-02-01&to_date=9999-12-31')).to.deep.equal(['2026-02-10', '2026-03-10']);
    expect(await names('status=sent')).to.deep.equal(['2026-03-10']);
    expect(await names('status=draft&per_page=1&page=2')).to.deep.equal(['2026-02-10']);
    const bad = await f.api(org).get('/messages?from_date=yesterday').expect(422);
    expect(bad.body.error.details).to.deep.equal({ field: 'from_date', rule: 'format' });
    await f.api(org).get('/messages?from_date=2026-03-01&to_date=2026-02-01').expect(422);
  });

  it('deletes, but not while sending; hides other organizations', async () => {
    const id = (await f.api().post('/messages', draft).expect(201)).body.data.id;
    const other = await createTenant(f.engine, { name: 'Other' });
    await f.api(other).get(`/messages/${id}`).expect(404);
    await f.engine.knex('messages').where({ id }).update({ status: 'active' });
    const refused = await f.api().delete(`/messages/${id}`).expect(422);
    expect(refused.body.error.details.rule).to.equal('not_sending');
    await f.engine.knex('messages').where({ id }).update({ status: 'cancelled' });
    await f.api().delete(`/messages/${id}`).expect(200);
    await f.api().get(`/messages/${id}`).expect(404);
  });
});
