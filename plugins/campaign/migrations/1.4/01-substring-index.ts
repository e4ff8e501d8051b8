import type { Knex } from 'knex';
import { createTableOnce } from '@switchboard/core';
import { appendGramRows, GRAM_TABLE } from '../../src/audience/search/gram-rows';

const BACKFILL_CHUNK = 2000;

/**
 * The substring index (docs/architecture.md, Substring search): per organization, status, bucket of
 * grams (1 to 3 characters) and block of 4096 subscriber ids, the set of ids whose folded name or email
 * holds each gram. Built here for the subscribers that exist, in id order.
 */
export async function up(knex: Knex): Promise<void> {
  // MySQL does not roll DDL back: a run that stopped halfway left a table to build again.
  await knex.schema.dropTableIfExists(GRAM_TABLE);
  await createGramTable(knex);
  await backfill(knex);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable(GRAM_TABLE);
}

export async function createGramTable(knex: Knex): Promise<void> {
  const mysql = knex.client.config.client === 'mysql2';
  await createTableOnce(knex, GRAM_TABLE, (t) => {
    t.integer('organization_id').unsigned().notNullable();
    t.string('subscriber_status', 16).notNullable();
    t.smallint('bucket').unsigned().notNullable();
    t.integer('block').unsigned().notNullable();
    t.integer('part').unsigned().notNullable();
    // A Bloom filter of the row's grams (search/grams.ts bloomOf), 64 bits as two halves.
    t.integer('bloom_low').unsigned().notNullable();
    t.integer('bloom_high').unsigned().notNullable();
    // The sets of the bucket's grams in the block (search/grams.ts), appended to by later writes.
    t.specificType('grams', mysql ? 'mediumblob' : 'blob').notNullable();
    t.primary(['organization_id', 'subscriber_status', 'bucket', 'block', 'part'], 'subscriber_grams_pk');
  });
}

async function backfill(knex: Knex): Promise<void> {
  for (let after = 0; ;) {
    const rows: Array<Record<string, unknown>> = await knex('subscribers')
      .where('id', '>', after)
      .orderBy('id')
      .limit(BACKFILL_CHUNK)
      .select('id', 'organization_id', 'email', 'status', 'first_name', 'last_name');
    if (!rows.length) break;
    const byOrganization = new Map<number, Array<Record<string, unknown>>>();
    for (const r of rows) {
      const org = Number(r.organization_id);
      byOrganization.set(org, [...(byOrganization.get(org) ?? []), r]);
    }
    for (const [org, members] of byOrganization) {
      await appendGramRows(
        knex,
        org,
        members.map((r) => ({
          id: Number(r.id),
          email: String(r.email),
          status: String(r.status),
          first_name: r.first_name as string | null,
          last_name: r.last_name as string | null,
        })),
      );
    }
    after = Number(rows[rows.length - 1].id);
  }
}
