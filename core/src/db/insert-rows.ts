import type { Knex } from 'knex';
import { dialectOfKnex } from './dialect';
import { loadOnFirstUse } from '../load-on-first-use';
import { onDriverConnection } from './driver-connection';

const mysql2 = loadOnFirstUse(() => require('mysql2') as typeof import('mysql2'));

export interface InsertRowsOptions {
  /** Skip rows whose key exists already (INSERT IGNORE / ON CONFLICT DO NOTHING). */
  ignoreExisting?: boolean;
  /**
   * A row whose key exists already appends its value of this binary column to the stored one instead
   * (ON DUPLICATE KEY UPDATE / ON CONFLICT DO UPDATE), and ORs the integer `orColumns` into theirs; `key`
   * names the key's columns (SQLite needs them).
   */
  appendOnConflict?: { key: string[]; column: string; orColumns?: string[] };
}

/** One multi-row statement: the id the driver reported for it, and how many rows it carried. */
export interface InsertedStatement {
  id: number;
  rows: number;
}

type Row = Record<string, unknown>;

/**
 * MySQL statements are prepared once per connection and size, then executed with the rows as
 * parameters. Measured during the audience import, CPU per imported subscriber (about ten rows):
 * prepared 36 µs of Node and 44 µs of MariaDB; multi-row VALUES text 37 + 52 µs (the server parses
 * every value); JSON_TABLE over one JSON parameter 34 + 54 µs. Few distinct sizes keep the prepared
 * statements per connection bounded (the server allows 16,382 in all).
 */
const MYSQL_STATEMENT_SIZES = [1000, 500, 100, 50, 10, 5, 1];
const MYSQL_MAX_PLACEHOLDERS = 65_535;
/** SQLite takes at most ~32k bound values a statement. */
const SQLITE_VALUES_PER_STATEMENT = 30_000;

/**
 * Rows given as one flat array of values, `columns.length` of them per row, in row order (null, never
 * undefined), plus the columns whose value every row shares. Callers that build many rows make no
 * object per row.
 */
export interface RowValues {
  columns: string[];
  values: unknown[];
  shared?: Record<string, unknown>;
}

/**
 * Multi-row inserts of many rows (all with the keys of the first) in few statements. On MySQL they
 * run on the transaction's own mysql2 connection: knex's pipeline (its builder, its binding pass, a
 * debug regex over every statement) costs more CPU than the rows at import sizes.
 */
export async function insertRows(
  trx: Knex | Knex.Transaction,
  table: string,
  rows: Row[],
  options: InsertRowsOptions = {},
): Promise<InsertedStatement[]> {
  if (!rows.length) return [];
  if (dialectOfKnex(trx) === 'sqlite') return insertWithKnex(trx, table, rows, options);
  const columns = Object.keys(rows[0]);
  // Columns with one value in every row (the organization, a status, a timestamp) go once per call as
  // session variables instead of once per row as parameters: fewer values for Node to encode.
  const shared = rows.length > 1 ? columns.filter((c) => isShared(rows, c)) : [];
  if (shared.length === columns.length) shared.pop();
  const perRow = columns.filter((c) => !shared.includes(c));
  const values: unknown[] = [];
  for (const row of rows) for (const c of perRow) values.push(row[c] ?? null);
  return insertValues(
    trx,
    table,
    { columns: perRow, values, shared: Object.fromEntries(shared.map((c) => [c, rows[0][c]])) },
    options,
  );
}

/** insertRows for rows given as RowValues. */
export async function insertValues(
  trx: Knex | Knex.Transaction,
  table: string,
  rows: RowValues,
  options: InsertRowsOptions = {},
): Promise<InsertedStatement[]> {
  const width = rows.columns.length;
  const count = rows.values.length / width;
  if (!count) return [];
  const shared = Object.entries(rows.shared ?? {});
  if (dialectOfKnex(trx) === 'sqlite') {
    const objects = Array.from({ length: count }, (_, r) => {
      const row: Row = Object.fromEntries(shared);
      rows.columns.forEach((c, i) => (row[c] = rows.values[r * width + i]));
      return row;
    });
    return insertWithKnex(trx, table, objects, options);
  }
  const { escapeId } = mysql2();
  const names = [...rows.columns, ...shared.map(([c]) => c)];
  const head = `INSERT ${options.ignoreExisting ? 'IGNORE ' : ''}INTO ${escapeId(table)} (${names.map((c) => escapeId(c)).join(', ')}) VALUES `;
  const append = options.appendOnConflict;
  const tail = append
    ? ` ON DUPLICATE KEY UPDATE ${[
        `${escapeId(append.column)} = CONCAT(${escapeId(append.column)}, VALUES(${escapeId(append.column)}))`,
        ...(append.orColumns ?? []).map((c) => `${escapeId(c)} = ${escapeId(c)} | VALUES(${escapeId(c)})`),
      ].join(', ')}`
    : '';
  const tuple = `(${[...rows.columns.map(() => '?'), ...shared.map((_, i) => `@sb_insert_${i}`)].join(', ')})`;
  const sizes = MYSQL_STATEMENT_SIZES.filter((size) => size * width <= MYSQL_MAX_PLACEHOLDERS);
  return onDriverConnection(trx, async ({ execute }) => {
    if (shared.length)
      await execute(
        `SET ${shared.map((_, i) => `@sb_insert_${i} = ?`).join(', ')}`,
        shared.map(([, v]) => v ?? null),
      );
    const statements: InsertedStatement[] = [];
    for (let i = 0; i < count;) {
      const size = sizes.find((s) => s <= count - i)!;
      const values = rows.values.slice(i * width, (i + size) * width);
      statements.push({
        id: (await execute(head + Array(size).fill(tuple).join(', ') + tail, values)).insertId,
        rows: size,
      });
      i += size;
    }
    return statements;
  });
}

/** The same string, number, time or null in every row (other objects are never shared). */
function isShared(rows: Row[], column: string): boolean {
  const comparable = (value: unknown) => (value instanceof Date ? value.getTime() : (value ?? null));
  const first = comparable(rows[0][column]);
  if (first !== null && typeof first === 'object') return false;
  for (const row of rows) if (comparable(row[column]) !== first) return false;
  return true;
}

async function insertWithKnex(
  trx: Knex | Knex.Transaction,
  table: string,
  rows: Row[],
  options: InsertRowsOptions,
): Promise<InsertedStatement[]> {
  const perStatement = Math.max(
    1,
    Math.min(400, Math.floor(SQLITE_VALUES_PER_STATEMENT / Object.keys(rows[0]).length)),
  );
  const statements: InsertedStatement[] = [];
  for (let i = 0; i < rows.length; i += perStatement) {
    const part = rows.slice(i, i + perStatement);
    const insert = trx(table).insert(part);
    const append = options.appendOnConflict;
    const [id] = (await (append
      ? insert.onConflict(append.key).merge({
          [append.column]: trx.raw('cast(?? || excluded.?? as blob)', [append.column, append.column]),
          ...Object.fromEntries((append.orColumns ?? []).map((c) => [c, trx.raw('?? | excluded.??', [c, c])])),
        })
      : options.ignoreExisting
        ? insert.onConflict().ignore()
        : insert)) as number[];
    statements.push({ id: Number(id), rows: part.length });
  }
  return statements;
}

/**
 * Inserts rows into a table with an auto-increment `id` and returns their ids in row order, without
 * reading them back when the database numbered each statement's rows consecutively (MySQL reports
 * the first id of a multi-row insert, SQLite the last). That is checked, not assumed: the rows at
 * both ends of each statement must carry the expected values of `uniqueColumn`; otherwise the ids
 * are looked up.
 */
export async function insertRowsReturningIds(
  trx: Knex | Knex.Transaction,
  table: string,
  rows: Row[],
  lookup: { uniqueColumn: string; scope: Record<string, unknown> },
): Promise<number[]> {
  if (!rows.length) return [];
  const mysql = dialectOfKnex(trx) === 'mysql';
  const statements = await insertRows(trx, table, rows);
  const ids: number[] = [];
  const ends: number[] = [];
  for (const { id, rows: count } of statements) {
    const first = mysql ? id : id - count + 1;
    ends.push(ids.length, ids.length + count - 1);
    for (let i = 0; i < count; i++) ids.push(first + i);
  }
  const { uniqueColumn, scope } = lookup;
  const found = new Map(
    (
      (await trx(table)
        .whereIn(
          'id',
          ends.map((i) => ids[i]),
        )
        .select('id', uniqueColumn)) as Row[]
    ).map((r) => [Number(r.id), r[uniqueColumn]]),
  );
  if (ends.every((i) => found.get(ids[i]) === rows[i][uniqueColumn])) return ids;
  const byValue = new Map(
    (
      (await trx(table)
        .where(scope)
        .whereIn(
          uniqueColumn,
          rows.map((r) => r[uniqueColumn] as string),
        )
        .select('id', uniqueColumn)) as Row[]
    ).map((r) => [r[uniqueColumn], Number(r.id)]),
  );
  return rows.map((r) => byValue.get(r[uniqueColumn])!);
}
