import crypto from 'node:crypto';
import type { Knex } from 'knex';
import { createTableOnce } from '@switchboard/core';

/** Install-wide settings; the signing secret of confirm and unsubscribe links is made here, once. */
export async function up(knex: Knex): Promise<void> {
  await createTableOnce(knex, 'campaign_settings', (t) => {
    t.string('name', 64).primary();
    t.text('value').notNullable();
  });
  await knex('campaign_settings')
    .insert({
      name: 'link_signing_secret',
      value: crypto.randomBytes(32).toString('hex'),
    })
    // Made by a run killed before it could record itself: kept (links already signed with it stay valid).
    .onConflict('name')
    .ignore();
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('campaign_settings');
}
