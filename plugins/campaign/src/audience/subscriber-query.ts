import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import { notFound, TOKENS, validationError } from '@switchboard/core';
import { statusCount } from './counters';
import { parseSearch, SubscriberSearch } from './search';
import { DETAIL_COLUMNS, LIST_COLUMNS, toDetail, toListItem } from './subscriber-rows';

/** Above this many matches a search reports this number as its total (and says so). */
export const SEARCH_COUNT_CAP = 10_000;

export interface SubscriberListQuery {
  page: number;
  per_page: number;
  list_id?: number;
  status: string;
  search?: string;
}

const escapeLike = (s: string) => `%${s.replace(/[!%_]/g, (c) => `!${c}`)}%`;

@injectable()
export class SubscriberQuery {
  constructor(@inject(TOKENS.Knex) private readonly knex: Knex) {}

  async list(orgId: number, q: SubscriberListQuery) {
    const search = parseSearch(q.search);
    const status = search.status ?? q.status;
    const listIds = await this.listFilter(orgId, q.list_id, search.listCode);
    if (listIds === null) return { items: [], total: 0, capped: false };

    const filtered = this.filter(orgId, status, listIds, search);
    const rows = await filtered
      .clone()
      .select(LIST_COLUMNS.map((c) => `s.${c}`))
      .orderBy('s.id')
      .limit(q.per_page)
      .offset((q.page - 1) * q.per_page);
    const memberships = await this.memberships(rows.map((r: { id: number }) => Number(r.id)));
    const items = rows.map((r: Record<string, unknown>) => toListItem(r, memberships.get(Number(r.id)) ?? []));
    const { total, capped } = await this.total(orgId, status, listIds, search, filtered);
    return { items, total, capped };
  }

  async get(orgId: number, id: number) {
    const row = await this.knex('subscribers').where({ organization_id: orgId, id }).first(DETAIL_COLUMNS);
    if (!row) throw notFound('Subscriber', id);
    const lists = await this.knex('list_subscribers as ls')
      .join('lists as l', 'l.id', 'ls.list_id')
      .where('ls.subscriber_id', id)
      .orderBy('l.id')
      .select('l.id', 'l.name', 'l.code');
    return toDetail(row, lists.map((l: { id: number; name: string; code: string }) => ({ id: Number(l.id), name: l.name, code: l.code })));
  }

  /** The list ids to filter on: undefined for none, null when a named list does not exist (no result). */
  private async listFilter(orgId: number, listId: number | undefined, code: string | undefined): Promise<number[] | undefined | null> {
    const ids: number[] = [];
    if (listId !== undefined) {
      const found = await this.knex('lists').where({ organization_id: orgId, id: listId }).first('id');
      if (!found) throw validationError('list_id', 'exists', `List ${listId} does not exist`);
      ids.push(listId);
    }
    if (code !== undefined) {
      const found = await this.knex('lists').where({ organization_id: orgId, code }).first('id');
      if (!found) return null;
      ids.push(Number(found.id));
    }
    return ids.length ? ids : undefined;
  }

  private filter(orgId: number, status: string, listIds: number[] | undefined, search: SubscriberSearch): Knex.QueryBuilder {
    const query = this.knex('subscribers as s').where('s.organization_id', orgId).andWhere('s.status', status);
    for (const [i, listId] of (listIds ?? []).entries()) {
      query.join(`list_subscribers as ls${i}`, (j) => j.on(`ls${i}.subscriber_id`, 's.id').andOnVal(`ls${i}.list_id`, listId));
    }
    if (search.email) query.andWhere('s.email', search.email);
    if (search.name) query.andWhereRaw("s.name_search like ? escape '!'", [escapeLike(search.name)]);
    if (search.createdAfter) query.andWhere('s.created_at', '>=', search.createdAfter);
    for (const [i, { key, value }] of search.meta.entries()) {
      query.join(`subscriber_meta as m${i}`, (j) =>
        j.on(`m${i}.subscriber_id`, 's.id').andOnVal(`m${i}.organization_id`, orgId).andOnVal(`m${i}.meta_key`, key).andOnVal(`m${i}.meta_value`, value),
      );
    }
    for (const word of search.words) {
      const like = escapeLike(word);
      query.andWhere((w) => w.whereRaw("s.email like ? escape '!'", [like]).orWhereRaw("s.name_search like ? escape '!'", [like]));
    }
    if (search.meta.length) query.distinct();
    return query;
  }

  /**
   * Totals come from the maintained counters when the filter is a status or one list; otherwise the
   * matches are counted up to SEARCH_COUNT_CAP.
   */
  private async total(orgId: number, status: string, listIds: number[] | undefined, search: SubscriberSearch, filtered: Knex.QueryBuilder) {
    const plain = !search.email && !search.name && !search.createdAfter && !search.meta.length && !search.words.length;
    if (plain && !listIds) return { total: await statusCount(this.knex, orgId, status), capped: false };
    if (plain && listIds?.length === 1) {
      const [{ n }] = await this.knex('list_subscribers').where({ list_id: listIds[0], subscriber_status: status }).count({ n: '*' });
      return { total: Number(n), capped: false };
    }
    const limited = filtered.clone().clearSelect().clearOrder().select('s.id').limit(SEARCH_COUNT_CAP + 1);
    const [{ n }] = await this.knex.from(limited.as('matches')).count({ n: '*' });
    const total = Number(n);
    return total > SEARCH_COUNT_CAP ? { total: SEARCH_COUNT_CAP, capped: true } : { total, capped: false };
  }

  private async memberships(ids: number[]): Promise<Map<number, number[]>> {
    const map = new Map<number, number[]>();
    if (!ids.length) return map;
    const rows = await this.knex('list_subscribers').whereIn('subscriber_id', ids).orderBy('list_id').select('subscriber_id', 'list_id');
    for (const r of rows as Array<{ subscriber_id: number; list_id: number }>) {
      const list = map.get(Number(r.subscriber_id)) ?? [];
      list.push(Number(r.list_id));
      map.set(Number(r.subscriber_id), list);
    }
    return map;
  }
}
