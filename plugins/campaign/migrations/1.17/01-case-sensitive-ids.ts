import type { Knex } from 'knex';

/** Ids providers and relays give, compared byte for byte on MariaDB too (SQLite always did). */
/** Per table, its columns: one ALTER each, so each table is rebuilt once (inbound_events is the largest). */
const COLUMNS: Record<string, { column: string; nullable: boolean }[]> = {
  inbound_events: [
    { column: 'provider_event_id', nullable: false },
    { column: 'provider_message_id', nullable: true },
  ],
  send_relay_ids: [{ column: 'relay_id', nullable: false }],
};

/**
 * The tables' default collation (utf8mb4_general_ci) ignores case, accents and trailing spaces: an event
 * whose id differed from another's only so (SendGrid's and Mailgun's ids are case-sensitive base64) was
 * dropped by `inbound_events_once` as a retry of it, and two relay ids so alike shared one row.
 */
export async function up(knex: Knex): Promise<void> {
  if (knex.client.config.client !== 'mysql2') return;
  const collation = await exactCollation(knex);
  for (const [table, columns] of Object.entries(COLUMNS)) {
    const modify = columns.map(
      ({ nullable }) =>
        `modify ?? varchar(191) character set utf8mb4 collate ${collation} ${nullable ? 'null' : 'not null'}`,
    );
    await knex.raw(`alter table ?? ${modify.join(', ')}`, [table, ...columns.map((c) => c.column)]);
  }
}

/**
 * Byte for byte, trailing spaces included: utf8mb4_bin pads (`pad-1 ` equals `pad-1`); MariaDB's
 * utf8mb4_nopad_bin and MySQL 8's utf8mb4_0900_bin do not.
 */
async function exactCollation(knex: Knex): Promise<string> {
  const [rows] = await knex.raw(
    `select collation_name as name from information_schema.collations
      where collation_name in ('utf8mb4_nopad_bin', 'utf8mb4_0900_bin')`,
  );
  const names = (rows as { name: string }[]).map((r) => r.name);
  return names.includes('utf8mb4_nopad_bin') ? 'utf8mb4_nopad_bin' : (names[0] ?? 'utf8mb4_bin');
}

/**
 * Nothing to undo: 1.16 reads and writes the same columns, and going back to the old collation would fail
 * on the ids it now tells apart (or merge them).
 */
export async function down(): Promise<void> {}
