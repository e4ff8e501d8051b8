import type { Knex } from 'knex';
import { benchBackend } from '@switchboard/core/testing';
import campaign from '../src';
import { searchRowsByTable } from '../src/audience/search/rows';

type Row = {
  email: string;
  first_name: string;
  last_name: string;
  lists: number[];
  meta_data: Record<string, string | string[]>;
};

/**
 * The import's baseline: the same table rows (subscriber, search words, meta values, memberships, the
 * search rows made by the plugin's own code) written straight with knex, 1000 subscribers per transaction and 4 at a time, with no HTTP, no
 * validation, no lookups and no counters: the plain way to write them with the project's own tools.
 */
export async function rawImportRate(count: number, makeRow: (n: number, lists: number[]) => Row): Promise<number> {
  const { backend, engine, tenant } = await benchBackend([campaign]);
  try {
    const org = tenant.organizationId;
    const knex = engine.knex;
    const listIds: number[] = [];
    for (let i = 0; i < 20; i++) {
      const [id] = await knex('lists').insert({
        organization_id: org,
        name: `L${i}`,
        code: `l${i}`,
        created_at: new Date(),
        updated_at: new Date(),
      });
      listIds.push(Number(id));
    }
    const started = performance.now();
    let next = 0;
    const worker = async () => {
      while (next < count) {
        const from = next;
        next = Math.min(count, next + 1000);
        const rows = Array.from({ length: next - from }, (_, i) => makeRow(from + i, listIds));
        await knex.transaction((trx) => writeRows(trx, org, rows));
      }
    };
    await Promise.all(Array.from({ length: 4 }, worker));
    return Math.round(count / ((performance.now() - started) / 1000));
  } finally {
    await engine.close();
    await backend.dispose();
  }
}

async function writeRows(trx: Knex.Transaction, org: number, rows: Row[]): Promise<void> {
  const now = new Date();
  await trx('subscribers').insert(
    rows.map((r) => ({
      organization_id: org,
      email: r.email,
      first_name: r.first_name,
      last_name: r.last_name,
      status: 'active',
      meta_data: JSON.stringify(r.meta_data),
      created_at: now,
      updated_at: now,
    })),
  );
  const ids = new Map<string, number>();
  for (const r of await trx('subscribers')
    .where({ organization_id: org })
    .whereIn(
      'email',
      rows.map((r) => r.email),
    )
    .select('id', 'email'))
    ids.set(r.email, Number(r.id));
  // The plugin's own rules make the search-word and meta rows (and their primary-key order): only the
  // writing differs. The substring index (campaign 1.4) is not in this baseline.
  const sources = rows.map((r) => ({ ...r, id: ids.get(r.email)!, status: 'active' }));
  for (const { table, rows: searchRows } of searchRowsByTable(org, sources)) await trx(table).insert(searchRows);
  await trx('list_subscribers').insert(
    rows.flatMap((r) =>
      r.lists.map((list) => ({
        list_id: list,
        subscriber_id: ids.get(r.email)!,
        subscriber_status: 'active',
        created_at: now,
      })),
    ),
  );
}
