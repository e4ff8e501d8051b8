import type { Knex } from 'knex';
import { appendMembershipRows, GRAM_TABLE, MEMBERSHIP_STATUS } from '../../src/audience/search/gram-rows';

const BACKFILL_CHUNK = 10_000;

/**
 * List memberships join the substring index (docs/architecture.md, Substring search): a search with a
 * substring and a list intersects the list's sets instead of reading its members. Added here for the
 * memberships that exist, in subscriber id order.
 */
export async function up(knex: Knex): Promise<void> {
  // A run that stopped halfway left some of them: start again from none.
  await down(knex);
  // Lists apart: joined, MariaDB read each list's members whole for every chunk.
  const organizationOf = new Map<number, number>(
    (await knex('lists').select('id', 'organization_id')).map((l: Record<string, unknown>) => [
      Number(l.id),
      Number(l.organization_id),
    ]),
  );
  for (let after: number | null = -1; after !== null;) {
    // About BACKFILL_CHUNK memberships, of whole subscribers: up to the id BACKFILL_CHUNK rows on.
    const bound: { subscriber_id: unknown } | undefined = await knex('list_subscribers')
      .where('subscriber_id', '>', after)
      .orderBy('subscriber_id')
      .offset(BACKFILL_CHUNK)
      .first('subscriber_id');
    const upTo: number | null = bound ? Number(bound.subscriber_id) : null;
    const query = knex('list_subscribers').where('subscriber_id', '>', after);
    if (upTo !== null) query.andWhere('subscriber_id', '<=', upTo);
    const rows: Array<Record<string, unknown>> = await query.select('subscriber_id', 'list_id');
    const byOrganization = new Map<number, Array<{ listId: number; id: number }>>();
    for (const r of rows) {
      const org = organizationOf.get(Number(r.list_id))!;
      const members = byOrganization.get(org) ?? byOrganization.set(org, []).get(org)!;
      members.push({ listId: Number(r.list_id), id: Number(r.subscriber_id) });
    }
    for (const [org, members] of byOrganization) await appendMembershipRows(knex, org, members);
    after = upTo;
  }
}

export async function down(knex: Knex): Promise<void> {
  await knex(GRAM_TABLE).where('subscriber_status', MEMBERSHIP_STATUS).delete();
}
