import type { Knex } from 'knex';

/**
 * Install-wide settings. The signing secret of confirm and unsubscribe links was made here in plain text;
 * 1.13 makes it sealed with the application key (and seals one made here before), so that no new install
 * ever writes it in plain text.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('campaign_settings', (t) => {
    t.string('name', 64).primary();
    t.text('value').notNullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('campaign_settings');
}
