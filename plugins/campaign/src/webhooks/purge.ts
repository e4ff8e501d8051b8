import type { Knex } from 'knex';

const BATCH = 5_000;
/** A tick deletes batches for this long at most: old rows go faster than a busy install adds them. */
const BUDGET_MS = 5_000;

/** Deletes deliveries finished before `before`, a batch per statement, within the tick's time budget. */
export async function purgeFinishedDeliveries(knex: Knex, before: Date): Promise<number> {
  const started = Date.now();
  let deleted = 0;
  for (;;) {
    const ids = await knex('webhook_deliveries').where('finished_at', '<', before).limit(BATCH).pluck('id');
    if (!ids.length) return deleted;
    deleted += await knex('webhook_deliveries').whereIn('id', ids).del();
    if (ids.length < BATCH || Date.now() - started > BUDGET_MS) return deleted;
  }
}
