import type { Knex } from 'knex';

/**
 * Multi-row inserts in as few statements as the database takes: knex writes SQLite's as a compound
 * SELECT, limited to 500 terms (and ~32k bound values); MySQL takes a 16 MB packet, far above
 * 2,000 rows of our widest table.
 */
export async function insertInChunks(trx: Knex | Knex.Transaction, table: string, rows: Record<string, unknown>[]): Promise<void> {
  if (!rows.length) return;
  const columns = Object.keys(rows[0]).length;
  const perStatement = trx.client.config.client === 'mysql2' ? 2000 : Math.max(1, Math.min(400, Math.floor(30_000 / columns)));
  for (let i = 0; i < rows.length; i += perStatement) await trx(table).insert(rows.slice(i, i + perStatement));
}
