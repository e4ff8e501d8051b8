import type { Knex } from 'knex';
import { toInt, validationError } from '@switchboard/core';

/** A 422 on `list_ids` naming the first id that is not one of the organization's lists. */
export async function assertListsOwned(knex: Knex, orgId: number, listIds: number[]): Promise<void> {
  const found = new Set(
    (await knex('lists').where({ organization_id: orgId }).whereIn('id', listIds).pluck('id')).map(toInt),
  );
  const missing = listIds.find((id) => !found.has(id));
  if (missing !== undefined) throw validationError('list_ids', 'exists', `List ${missing} does not exist`);
}
