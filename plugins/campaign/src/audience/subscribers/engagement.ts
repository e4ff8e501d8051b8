import type { Knex } from 'knex';
import {
  addByKey,
  byPrimaryKey,
  dialectOfKnex,
  placeholders,
  rowPlaceholders,
  selectText,
  setWhereIn,
  toInt,
  updateText,
  writeText,
} from '@switchboard/core';

const TABLE = 'subscriber_engagement';
const CHUNK = 500;

/** A subscriber's first opens and clicks of mails (its `messages_opened` and `messages_clicked` rise by them). */
export interface Engagement {
  opened: number;
  clicked: number;
}

/**
 * Adds first opens and clicks to their subscribers' counters and moves their latest engagement day to
 * `day` (never back); answers each subscriber's day before (null: never engaged). The caller has locked
 * the subscribers' rows (the mail-event ledger's mails read), so no other transaction engages them
 * meanwhile. A subscriber's row is written the first time it engages: new ones in one `INSERT IGNORE ...
 * RETURNING` (MariaDB 10.5+, SQLite 3.35+) that names the rows it wrote, the others read locked and updated.
 */
export async function engage(
  trx: Knex.Transaction,
  day: string,
  engaged: ReadonlyMap<number, Engagement>,
): Promise<Map<number, string | null>> {
  const before = new Map<number, string | null>();
  const ids = [...engaged.keys()].sort((a, b) => a - b);
  const mysql = dialectOfKnex(trx) === 'mysql';
  for (let i = 0; i < ids.length; i += CHUNK) {
    const part = ids.slice(i, i + CHUNK);
    const written = await selectText(
      trx,
      `${mysql ? 'insert ignore' : 'insert or ignore'} into \`${TABLE}\` ` +
        '(`subscriber_id`, `messages_opened`, `messages_clicked`, `last_engaged_day`) values ' +
        `${rowPlaceholders(part.length, 4)} returning \`subscriber_id\``,
      part.flatMap((id) => [id, engaged.get(id)!.opened, engaged.get(id)!.clicked, day]),
    );
    for (const r of written) before.set(toInt(r.subscriber_id), null);
    const stored = part.filter((id) => !before.has(id));
    if (!stored.length) continue;
    const where = { sql: `\`subscriber_id\` in (${placeholders(stored.length)})`, values: stored };
    for (const r of await selectText(
      trx,
      `select \`subscriber_id\`, \`last_engaged_day\` from ${byPrimaryKey(trx, TABLE)} where ${where.sql}${mysql ? ' for update' : ''}`,
      stored,
    ))
      before.set(toInt(r.subscriber_id), (r.last_engaged_day as string | null) ?? null);
    const amounts = (column: keyof Engagement) =>
      new Map(stored.filter((id) => engaged.get(id)![column]).map((id) => [id, engaged.get(id)![column]]));
    const sets = (['opened', 'clicked'] as const)
      .map((column) => ({ column: `messages_${column}`, amounts: amounts(column) }))
      .filter(({ amounts }) => amounts.size)
      .map(({ column, amounts }) => addByKey('subscriber_id', column, amounts, stored.length));
    const moving = stored.filter((id) => (before.get(id) ?? '') < day);
    if (moving.length)
      sets.push(setWhereIn({ key: 'subscriber_id', ids: moving, of: stored.length }, 'last_engaged_day', day));
    if (sets.length) await updateText(trx, TABLE, sets, where);
  }
  return before;
}

/**
 * Deletes subscribers' engagement rows: answers how many of them were last engaged on each day, for the
 * day counts. The caller has locked the subscribers' rows before anything else in its transaction, and a
 * ledger run engages a subscriber only with its row locked (the mails read): so a plain read here sees
 * every engagement row of theirs, as it stays until the commit. The rows found are deleted by key: a
 * locking read or a DELETE naming ids without a row would lock the gaps where they would go (MariaDB's
 * REPEATABLE READ), and hold up other subscribers' first engagements until the commit.
 */
export async function dropEngagement(trx: Knex.Transaction, subscriberIds: number[]): Promise<Map<string, number>> {
  const byDay = new Map<string, number>();
  for (let i = 0; i < subscriberIds.length; i += CHUNK) {
    const part = [...subscriberIds.slice(i, i + CHUNK)].sort((a, b) => a - b);
    const rows = await selectText(
      trx,
      `select \`subscriber_id\`, \`last_engaged_day\` from \`${TABLE}\` where \`subscriber_id\` in (${placeholders(part.length)})`,
      part,
    );
    if (!rows.length) continue;
    for (const r of rows)
      if (r.last_engaged_day !== null) {
        const day = String(r.last_engaged_day);
        byDay.set(day, (byDay.get(day) ?? 0) + 1);
      }
    const found = rows.map((r) => toInt(r.subscriber_id));
    await writeText(trx, `delete from \`${TABLE}\` where \`subscriber_id\` in (${placeholders(found.length)})`, found);
  }
  return byDay;
}
