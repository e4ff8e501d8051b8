import type { Knex } from 'knex';
import { createTableOnce } from '@switchboard/core';

const REFILL_CHUNK = 2000;
const WORD = /[\p{L}\p{N}]+/gu;
const MAX_WORD = 64;

/**
 * `word*` prefixes are answered by the substring index (a substring that starts a word), so the table
 * of name and email words is no longer read. Writing it was the largest cost of an import: 4 to 6 rows
 * a subscriber keyed by the word, landing all over its B-tree (docs/performance-history.md).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('subscriber_tokens');
}

/** The table as 1.1 left it (no foreign key, no index on subscriber_id), refilled with 1.0's words. */
export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('subscriber_tokens');
  await createTableOnce(knex, 'subscriber_tokens', (t) => {
    t.integer('organization_id').unsigned().notNullable();
    t.integer('subscriber_id').unsigned().notNullable();
    t.string('kind', 1).notNullable();
    t.string('token', 64).notNullable();
    t.string('subscriber_status', 16).notNullable();
    t.primary(['organization_id', 'kind', 'token', 'subscriber_status', 'subscriber_id'], 'subscriber_tokens_pk');
  });
  for (let after = 0; ;) {
    const subscribers: Array<Record<string, unknown>> = await knex('subscribers')
      .where('id', '>', after)
      .orderBy('id')
      .limit(REFILL_CHUNK)
      .select('id', 'organization_id', 'email', 'status', 'first_name', 'last_name');
    if (!subscribers.length) break;
    const rows = subscribers.flatMap((s) =>
      wordsOf(s).map(([kind, token]) => ({
        organization_id: s.organization_id,
        subscriber_id: s.id,
        kind,
        token,
        subscriber_status: s.status,
      })),
    );
    // MySQL's case-insensitive collation takes some distinct words as one key.
    for (let i = 0; i < rows.length; i += 500)
      await knex('subscriber_tokens')
        .insert(rows.slice(i, i + 500))
        .onConflict()
        .ignore();
    after = Number(subscribers[subscribers.length - 1].id);
  }
}

const lowerWords = (text: unknown) => (typeof text === 'string' ? (text.toLowerCase().match(WORD) ?? []) : []);

/** 1.0's words of a subscriber: name words; the email's local part, its domain and the local part's pieces. */
function wordsOf(s: Record<string, unknown>): Array<[kind: string, word: string]> {
  const words = new Map<string, [string, string]>();
  const add = (kind: string, word: string) => {
    const cut = word.slice(0, MAX_WORD);
    if (cut) words.set(kind + cut, [kind, cut]);
  };
  for (const w of [...lowerWords(s.first_name), ...lowerWords(s.last_name)]) add('n', w);
  const email = String(s.email).toLowerCase();
  const at = email.lastIndexOf('@');
  const local = email.slice(0, at);
  add('e', local);
  add('e', email.slice(at + 1));
  const pieces = lowerWords(local);
  if (pieces.length > 1) for (const w of pieces) add('e', w);
  return [...words.values()];
}
