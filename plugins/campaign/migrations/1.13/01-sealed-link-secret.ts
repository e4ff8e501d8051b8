import crypto from 'node:crypto';
import type { Knex } from 'knex';
import type { MigrationContext, SecretBox } from '@switchboard/core';

const PLAIN = 'link_signing_secret';
const SEALED = 'sealed_link_signing_secret';

/**
 * The secret that signs confirm, unsubscribe and tracking links (and derives changelog webhook secrets) is
 * kept sealed with the application key (issue 26), under a name of its own: a process of an older version
 * still running after the upgrade finds no secret and fails, rather than signing with the sealed text.
 * The plain secret is sealed as it is (a new install's too, made by 1.0 in the same `migrate`), so links
 * signed before still verify. The rollback writes it back in plain text under its old name.
 */
export async function up(knex: Knex, context: MigrationContext): Promise<void> {
  await addSealedSecret(knex, context.secrets);
  await knex('campaign_settings').where({ name: PLAIN }).delete();
}

export async function down(knex: Knex, context: MigrationContext): Promise<void> {
  const sealed = await valueOf(knex, SEALED);
  if (sealed === undefined) return;
  await knex('campaign_settings')
    .insert({ name: PLAIN, value: context.secrets.open(sealed) })
    .onConflict('name')
    .merge();
  await knex('campaign_settings').where({ name: SEALED }).delete();
}

/**
 * The sealed row beside the plain one (upgrade tests give it to a database of an older version, whose
 * links today's code signs): the plain secret sealed, or a new secret when there is none.
 */
export async function addSealedSecret(knex: Knex, secrets: SecretBox): Promise<void> {
  const plain = await valueOf(knex, PLAIN);
  if (plain === undefined && (await valueOf(knex, SEALED)) !== undefined) return;
  const value = secrets.seal(plain ?? crypto.randomBytes(32).toString('hex'));
  await knex('campaign_settings').insert({ name: SEALED, value }).onConflict('name').merge();
}

async function valueOf(knex: Knex, name: string): Promise<string | undefined> {
  const row = await knex('campaign_settings').where({ name }).first('value');
  return row ? String(row.value) : undefined;
}
