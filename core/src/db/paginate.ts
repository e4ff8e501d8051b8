import type { Knex } from 'knex';

/** One page of a filtered query, ordered by id, with the total count of the filter. */
export async function paginate<T>(
  filtered: Knex.QueryBuilder,
  page: { page: number; per_page: number },
  columns: string[],
  toItem: (row: Record<string, unknown>) => T,
): Promise<{ items: T[]; total: number }> {
  const [{ total }] = await filtered.clone().count({ total: '*' });
  const rows = await filtered
    .select(columns)
    .orderBy('id')
    .limit(page.per_page)
    .offset((page.page - 1) * page.per_page);
  return { items: rows.map(toItem), total: Number(total) };
}
