import type { Knex } from 'knex';
import { listTables } from '@switchboard/core';

/**
 * Rows and the latest change of every table, as one string: what a refused request must leave as it was.
 * The table list is read on the first call and kept.
 */
export function databaseState(knex: Knex): () => Promise<string> {
  const tables: Array<{ name: string; hasUpdatedAt: boolean }> = [];
  return async () => {
    if (!tables.length)
      for (const name of await listTables(knex))
        tables.push({ name, hasUpdatedAt: await knex.schema.hasColumn(name, 'updated_at') });
    const rows = await knex.raw(
      tables
        .map(
          (t) =>
            `select '${t.name}' as t, count(*) as n, ${t.hasUpdatedAt ? 'max(updated_at)' : 'null'} as changed from ${t.name}`,
        )
        .join(' union all '),
    );
    const list = (Array.isArray(rows[0]) ? rows[0] : rows) as Array<{ t: string; n: unknown; changed: unknown }>;
    return JSON.stringify(list.map((r) => [r.t, Number(r.n), String(r.changed ?? '')]));
  };
}
