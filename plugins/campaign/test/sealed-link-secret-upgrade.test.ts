import crypto from 'node:crypto';
import { expect } from 'chai';
import { describeEachBackend } from '@switchboard/core/testing';
import { campaignAtVersion, campaignContainer, campaignFixture } from '../src/shared/tests/support';
import { UnsubscribeLinks } from '../src/sending/unsubscribe-links';

const PLAIN = 'link_signing_secret';
const SEALED = 'sealed_link_signing_secret';

/** An unsubscribe token as 1.12 signed it: the ids and their HMAC under the plain secret. */
const signedBy112 = (secret: string, ids: number[]) =>
  `${ids.join('.')}.${crypto
    .createHmac('sha256', secret)
    .update(`unsubscribe.${ids.join('.')}`)
    .digest('base64url')}`;

/**
 * Issue 26: the link-signing secret was kept in plain text, so whoever read the database could sign
 * unsubscribe and tracking links. 1.13 keeps it sealed with APP_KEY; the secret itself is the same, so a
 * link in a mail sent before the upgrade still works. A new install keeps only the sealed secret.
 */
describeEachBackend('campaign: upgrading to 1.13 (link-signing secret sealed)', (backend) => {
  let at: { close(): Promise<void> } | undefined;
  afterEach(async () => {
    await at?.close();
    at = undefined;
  });

  it('a new install keeps only the sealed secret', async () => {
    const fixture = await campaignFixture(backend());
    at = fixture;
    const rows = await fixture.engine.knex('campaign_settings').orderBy('name').select('name', 'value');
    expect(rows.map((r: { name: string }) => r.name)).to.deep.equal([SEALED]);
    expect(String(rows[0].value)).to.match(/^v1:/);
  });

  it("seals 1.12's plain secret: a link signed before verifies through the route after, and rolls back", async () => {
    const old = await campaignAtVersion(backend(), '1.12');
    at = old;
    const { engine, api, tenant } = old;
    const knex = engine.knex;
    const org = tenant.organizationId;
    const ada = (await api.post('/subscribers', { email: 'ada@old.test' }).expect(201)).body.data.id;
    const now = new Date();
    const [message] = await knex('messages').insert({
      organization_id: org,
      name: 'Old',
      subject: 'Old news',
      status: 'sent',
      sent_at: now,
      created_at: now,
      updated_at: now,
    });
    // The settings exactly as 1.12 left them (campaignAtVersion adds the sealed row today's code reads).
    await knex('campaign_settings').where({ name: SEALED }).delete();
    const plain = String((await knex('campaign_settings').where({ name: PLAIN }).first('value')).value);
    expect(plain).to.match(/^[0-9a-f]{64}$/);
    const token = signedBy112(plain, [org, message, ada]);

    const applied = await engine.migrator().latest({ plugin: 'campaign', to: '1.13' });
    expect(applied).to.deep.equal([{ plugin: 'campaign', applied: ['1.13/01-sealed-link-secret'] }]);
    const rows = await knex('campaign_settings').select('name', 'value');
    expect(rows.map((r: { name: string }) => r.name)).to.deep.equal([SEALED]);
    expect(String(rows[0].value)).to.match(/^v1:/).and.not.include(plain);
    // The same secret: today's code signs the very link 1.12 did.
    const signedNow = await campaignContainer(engine).resolve(UnsubscribeLinks).link(org, message, ada);
    expect(new URL(signedNow).searchParams.get('token')).to.equal(token);

    const link = `/unsubscribe?token=${token}`;
    expect((await api.get(link).expect(200)).text).to.include('ada@old.test');
    await api.post(link).expect(200);
    expect((await api.get(`/subscribers/${ada}`).expect(200)).body.data.status).to.equal('unsubscribed');
    const forged = signedBy112('0'.repeat(64), [org, message, ada]);
    await api.post(`/unsubscribe?token=${forged}`).expect(404);

    // Back to 1.12: the plain secret under its old name, as it was.
    await engine.migrator().rollback({ plugin: 'campaign', to: '1.12' });
    expect(await knex('campaign_settings').select('name', 'value')).to.deep.equal([{ name: PLAIN, value: plain }]);
  });
});
