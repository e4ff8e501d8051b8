import type { Knex } from 'knex';

const WORD = /[\p{L}\p{N}]+/gu;
const MAX = 64;

const words = (text: string | null | undefined) => (text ? (text.toLowerCase().match(WORD) ?? []) : []);

/** Search tokens of a subscriber: name words, and the email's local part, its pieces and its domain. */
export function subscriberTokens(s: { email: string; first_name?: string | null; last_name?: string | null }): Array<{ kind: 'n' | 'e'; token: string }> {
  const out = new Map<string, { kind: 'n' | 'e'; token: string }>();
  const add = (kind: 'n' | 'e', token: string) => {
    if (token) out.set(`${kind}:${token.slice(0, MAX)}`, { kind, token: token.slice(0, MAX) });
  };
  for (const w of [...words(s.first_name), ...words(s.last_name)]) add('n', w);
  const email = s.email.toLowerCase();
  const at = email.lastIndexOf('@');
  const local = email.slice(0, at);
  add('e', email);
  add('e', local);
  add('e', email.slice(at + 1));
  for (const w of words(local)) add('e', w);
  return [...out.values()];
}

/** The words of a name search, as the token index stores them. */
export const nameWords = (text: string) => words(text).map((w) => w.slice(0, MAX));

/** A plain search word is matched whole (`example.com`, `ada@`) against the start of any token. */
export const plainToken = (word: string) => word.toLowerCase().slice(0, MAX);

export async function writeTokens(
  trx: Knex.Transaction,
  organizationId: number,
  subscribers: Array<{ id: number; email: string; first_name?: string | null; last_name?: string | null }>,
  replace = false,
): Promise<void> {
  if (replace && subscribers.length) await trx('subscriber_tokens').whereIn('subscriber_id', subscribers.map((s) => s.id)).delete();
  const rows = subscribers.flatMap((s) => subscriberTokens(s).map((t) => ({ organization_id: organizationId, subscriber_id: s.id, ...t })));
  for (let i = 0; i < rows.length; i += 400) await trx('subscriber_tokens').insert(rows.slice(i, i + 400));
}
