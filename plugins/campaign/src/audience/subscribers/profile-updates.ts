import type { Knex } from 'knex';
import type { SearchSource } from '../search';

/** Rows per statement: SQLite takes at most ~32k bound values, a row here has at most 13. */
const ROWS_PER_STATEMENT = 500;

export interface ProfileUpdate {
  /** The stored row, locked by the caller's transaction (SELECT ... FOR UPDATE on MySQL). */
  stored: SearchSource;
  /** The profile columns to set (profileColumns of the input). */
  columns: Record<string, unknown>;
}

/**
 * Sets the given profile columns of many existing subscribers, with one multi-row upsert by id per
 * set of given columns (INSERT ... ON DUPLICATE KEY UPDATE, ON CONFLICT DO UPDATE on SQLite) instead
 * of one UPDATE per subscriber. Every row exists and stays (the caller locked it), so the insert
 * half never inserts: its other values (created_at) only satisfy the column constraints.
 */
export async function updateProfiles(
  trx: Knex.Transaction,
  organizationId: number,
  updates: ProfileUpdate[],
  now: Date,
): Promise<void> {
  const groups = new Map<string, ProfileUpdate[]>();
  for (const update of updates) {
    const key = Object.keys(update.columns).join(',');
    (groups.get(key) ?? groups.set(key, []).get(key)!).push(update);
  }
  for (const [key, group] of groups) {
    const set = [...(key ? key.split(',') : []), 'updated_at'];
    const rows = group.map(({ stored, columns }) => ({
      id: stored.id,
      organization_id: organizationId,
      email: stored.email,
      status: stored.status,
      created_at: now,
      ...columns,
      updated_at: now,
    }));
    for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT) {
      await trx('subscribers')
        .insert(rows.slice(i, i + ROWS_PER_STATEMENT))
        .onConflict('id')
        .merge(set);
    }
  }
}
