import type { Knex } from 'knex';

const BATCH = 5_000;

/** Deletes one batch of deliveries finished before `before` (the next run takes the next batch). */
export async function purgeFinishedDeliveries(knex: Knex, before: Date): Promise<number> {
  const ids = await knex('webhook_deliveries').where('finished_at', '<', before).limit(BATCH).pluck('id');
  if (!ids.length) return 0;
  return knex('webhook_deliveries').whereIn('id', ids).del();
}
