import type { Knex } from 'knex';
import { dialectOfKnex } from './dialect';
import { rowPlaceholders, writeText } from './statement-text';

/** Values a statement, at most: below SQLite's limit on bound values (32,766). */
const VALUES_A_STATEMENT = 30_000;

const order = (a: unknown, b: unknown) => {
  const [x, y] = [a instanceof Date ? a.getTime() : a, b instanceof Date ? b.getTime() : b] as Array<string | number>;
  return x < y ? -1 : x > y ? 1 : 0;
};

/**
 * Inserts counter rows, or adds a row's `column` to the stored one's where its `key` exists already (a
 * day's figures, a timeline's periods). Every row has the keys of the first. The rows go in key order, so
 * that concurrent transactions take their locks alike; as SQL text past knex's builder (statement-text.ts),
 * since these run once per recorded run of events.
 */
export async function addOnConflict<Row extends object>(
  trx: Knex | Knex.Transaction,
  table: string,
  key: ReadonlyArray<keyof Row & string>,
  column: keyof Row & string,
  rows: readonly Row[],
): Promise<void> {
  if (!rows.length) return;
  const columns = Object.keys(rows[0]) as Array<keyof Row & string>;
  if (rows.some((row) => Object.keys(row).length !== columns.length))
    throw new Error(`addOnConflict into ${table}: every row needs the columns of the first`);
  const sorted = [...rows].sort((a, b) => {
    for (const c of key) {
      const by = order(a[c], b[c]);
      if (by) return by;
    }
    return 0;
  });
  const onConflict =
    dialectOfKnex(trx) === 'mysql'
      ? `on duplicate key update \`${column}\` = \`${column}\` + values(\`${column}\`)`
      : `on conflict (${key.map((c) => `\`${c}\``).join(', ')}) do update set \`${column}\` = \`${table}\`.\`${column}\` + excluded.\`${column}\``;
  const perStatement = Math.floor(VALUES_A_STATEMENT / columns.length);
  for (let i = 0; i < sorted.length; i += perStatement) {
    const part = sorted.slice(i, i + perStatement);
    await writeText(
      trx,
      `insert into \`${table}\` (${columns.map((c) => `\`${c}\``).join(', ')}) values ` +
        `${rowPlaceholders(part.length, columns.length)} ${onConflict}`,
      part.flatMap((row) => columns.map((c) => row[c] ?? null)),
    );
  }
}
