import type { Knex } from 'knex';
import { notFound } from '../http/errors';

/**
 * The row of `table` with this id in the organization, or RESOURCE_NOT_FOUND naming `what`: another
 * organization's id looks exactly like one that does not exist.
 */
export async function ownedRow(
  knex: Knex,
  table: string,
  organizationId: number,
  id: number,
  columns: string[],
  what: string,
): Promise<Record<string, unknown>> {
  const row = await knex(table).where({ organization_id: organizationId, id }).first(columns);
  if (!row) throw notFound(what, id);
  return row;
}

/** Deletes the organization's row, or RESOURCE_NOT_FOUND naming `what`. */
export async function deleteOwnedRow(
  knex: Knex,
  table: string,
  organizationId: number,
  id: number,
  what: string,
): Promise<void> {
  if (!(await knex(table).where({ organization_id: organizationId, id }).delete())) throw notFound(what, id);
}
