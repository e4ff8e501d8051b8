import type { Knex } from 'knex';
import { dialectOfKnex } from './dialect';
import { placeholders, writeText } from './statement-text';

/** Rows a statement, at most: 5 columns a row stays far below both databases' limits on values. */
const ROWS_A_STATEMENT = 500;

/**
 * Inserts counter rows, or adds a row's `column` to the stored one's where its `key` exists already (a
 * day's figures, a timeline's periods): one statement per 500 rows, in the order given (callers sort
 * them, so that concurrent transactions take the rows' locks alike). Statement text past knex's builder
 * (statement-text.ts): these run once per recorded run of events.
 */
export async function addOnConflict<Row extends object>(
  trx: Knex | Knex.Transaction,
  table: string,
  key: readonly string[],
  column: string,
  rows: readonly Row[],
): Promise<void> {
  if (!rows.length) return;
  const columns = Object.keys(rows[0]) as Array<keyof Row>;
  const quoted = columns.map((c) => `\`${String(c)}\``).join(', ');
  const onConflict =
    dialectOfKnex(trx) === 'mysql'
      ? `on duplicate key update \`${column}\` = \`${column}\` + values(\`${column}\`)`
      : `on conflict (${key.map((c) => `\`${c}\``).join(', ')}) do update set \`${column}\` = \`${table}\`.\`${column}\` + excluded.\`${column}\``;
  for (let i = 0; i < rows.length; i += ROWS_A_STATEMENT) {
    const part = rows.slice(i, i + ROWS_A_STATEMENT);
    const values = part.flatMap((row) => columns.map((c) => row[c] ?? null));
    const tuples = Array(part.length)
      .fill(`(${placeholders(columns.length)})`)
      .join(', ');
    await writeText(trx, `insert into \`${table}\` (${quoted}) values ${tuples} ${onConflict}`, values);
  }
}
