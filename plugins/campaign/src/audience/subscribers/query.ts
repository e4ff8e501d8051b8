import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import { dialectOfKnex, lastPage, notFound, toInt, toText, SERVICES, validationError } from '@switchboard/core';
import { statusCount } from './status-counts';
import { parseSearch, SubscriberSearch } from '../search';
import { DETAIL_COLUMNS, LIST_COLUMNS, toDetail, toListItem } from './rows';
import { searchTerms } from '../search';
import { IdFilter, scanSubstrings, spanOf, SubstringTerm, termHolds } from '../search';
import { SEARCH_OPTIONS, SearchOptions } from '../search';
import { searchTexts } from '../search';
import type { SubscriberListQuery } from './schemas';

/** Above this many matches a search reports this number as its total (and says so). */
export const SEARCH_COUNT_CAP = 10_000;
/**
 * The same for searches with substrings, whose every match is confirmed against its row: counting
 * 10,000 of them cost 80 ms at a million subscribers, 1,000 about a tenth (docs/performance-history.md).
 */
export const SUBSTRING_COUNT_CAP = 1_000;

/**
 * Reaching a page past the matches a substring search counts would mean confirming every match before
 * it (83,000 for a common name at a million subscribers): refused, as the total's links never lead there
 * (docs/decisions.md, Search).
 */
const pastCountedMatches = (q: SubscriberListQuery, total: number) =>
  validationError(
    'page',
    'maximum',
    `A search with substrings pages only through the ${total} matches its capped total counts (at most ` +
      `page ${lastPage(total, q.per_page)} at per_page ${q.per_page}); narrow the search to reach the others`,
  );

/**
 * A search that stopped on its bounds (candidates confirmed, index bytes read) before finding a match of
 * the page asked for: an empty page would say "no match" without knowing it (docs/decisions.md, Search).
 */
const tooBroad = (q: SubscriberListQuery) =>
  validationError(
    'search',
    'too_broad',
    `Search too broad: its terms are in most subscribers, and the candidates and index rows one request may ` +
      `read held no match for page ${q.page}. Add a longer or rarer term, a list: or a meta. filter (until the ` +
      `index is compacted after a large import, a request reads less of it)`,
  );

/**
 * Listing and search, built to cost the same at ten thousand and at a million subscribers: every
 * filter is an index range (substring index, meta and membership tables), a page is chosen on ids alone and
 * only its rows are read, and totals come from maintained counters or a capped count.
 */
@injectable()
export class SubscriberQuery {
  constructor(
    @inject(SERVICES.Knex) private readonly knex: Knex,
    @inject(SEARCH_OPTIONS) private readonly searchOptions: SearchOptions,
  ) {}

  async list(orgId: number, q: SubscriberListQuery) {
    const search = parseSearch(q.search);
    const status = search.status ?? q.status;
    const listIds = await this.listFilter(orgId, q.list_id, search.listCode);
    if (listIds === null) return { items: [], total: 0, capped: false };

    const terms = searchTerms(search);
    if (terms.length) return this.bySubstrings(orgId, status, listIds, search, terms, q);
    const { query, idColumn } = this.filter(orgId, status, listIds, search);
    const ids: number[] = (
      await query
        .clone()
        .select({ id: idColumn })
        .orderBy(idColumn)
        .limit(q.per_page)
        .offset((q.page - 1) * q.per_page)
    ).map((r: Record<string, unknown>) => toInt(r.id));
    const [items, counted] = await Promise.all([
      this.items(ids),
      this.total(orgId, status, listIds, search, query, idColumn),
    ]);
    // Past a capped count, a full page may have more after it: its next link says so.
    return { items, ...counted, more: counted.capped && ids.length === q.per_page };
  }

  /**
   * A search with substring terms: the substring index gives candidates in id order, narrowed by the
   * other filters' id ranges, confirmed against their rows; the scan stops once the page and the capped
   * total are known (docs/architecture.md, Substring search).
   */
  private async bySubstrings(
    orgId: number,
    status: string,
    listIds: number[] | undefined,
    search: SubscriberSearch,
    terms: SubstringTerm[],
    q: SubscriberListQuery,
  ) {
    const offset = (q.page - 1) * q.per_page;
    // Rows as arrays on MySQL: a list's members over a million subscribers are 100,000 rows, and mysql2
    // builds an object per row otherwise.
    const ids = async (query: Knex.QueryBuilder): Promise<number[]> =>
      dialectOfKnex(this.knex) === 'sqlite'
        ? (await query.pluck('subscriber_id')).map(toInt)
        : ((await query.select('subscriber_id').options({ rowsAsArray: true })) as unknown[][]).map((r) => toInt(r[0]));
    const filter = (base: () => Knex.QueryBuilder): IdFilter => ({
      span: () => spanOf(base(), 'subscriber_id'),
      inRange: (from, to) =>
        ids(base().andWhere('subscriber_id', '>=', from).andWhere('subscriber_id', '<', to).orderBy('subscriber_id')),
      among: (candidates) => ids(base().whereIn('subscriber_id', candidates)),
    });
    const idFilters = search.meta.map(({ key, value }) =>
      filter(() =>
        this.knex('subscriber_meta').where({
          organization_id: orgId,
          meta_key: key,
          meta_value: value,
          subscriber_status: status,
        }),
      ),
    );
    const confirm = async (candidates: number[]) => {
      const query = this.knex('subscribers')
        .whereIn('id', candidates)
        .andWhere({ organization_id: orgId, status })
        .select('id', 'email', 'first_name', 'last_name')
        .orderBy('id');
      for (const email of search.emails) query.andWhere('email', email);
      if (search.createdAfter) query.andWhere('created_at', '>=', search.createdAfter);
      // The index's sets of members keep removed memberships; here each is one primary-key lookup.
      for (const listId of listIds ?? [])
        query.whereExists((member) =>
          member
            .select(this.knex.raw('1'))
            .from('list_subscribers')
            .whereRaw('list_subscribers.subscriber_id = subscribers.id')
            .andWhere('list_subscribers.list_id', listId),
        );
      const rows = (await query) as Array<Record<string, unknown>>;
      return rows
        .filter((r) => {
          const texts = searchTexts({
            email: toText(r.email),
            first_name: r.first_name as string | null,
            last_name: r.last_name as string | null,
          });
          return terms.every((t) => termHolds(t, texts));
        })
        .map((r) => toInt(r.id));
    };
    const { ids: matches, complete } = await scanSubstrings({
      knex: this.knex,
      organizationId: orgId,
      status,
      terms,
      listIds: listIds ?? [],
      idFilters,
      confirm,
      // A page past the counted matches needs only to know whether there are more than counted.
      enough:
        offset < SUBSTRING_COUNT_CAP ? Math.max(SUBSTRING_COUNT_CAP + 1, offset + q.per_page) : SUBSTRING_COUNT_CAP + 1,
      readBudgetBytes: this.searchOptions.readBudgetBytes,
    });
    const counted =
      complete && matches.length <= SUBSTRING_COUNT_CAP
        ? { total: matches.length, capped: false }
        : { total: Math.min(matches.length, SUBSTRING_COUNT_CAP), capped: true };
    if (!complete && matches.length <= offset) throw tooBroad(q);
    if (counted.capped && q.page > lastPage(counted.total, q.per_page)) throw pastCountedMatches(q, counted.total);
    const items = await this.items(matches.slice(offset, offset + q.per_page));
    return { items, ...counted };
  }

  /** The list items of a page of ids, in that order; one deleted since the ids were read is left out. */
  private async items(ids: number[]) {
    const [rows, memberships] = await Promise.all([
      ids.length ? this.knex('subscribers').whereIn('id', ids).select(LIST_COLUMNS) : Promise.resolve([]),
      this.memberships(ids),
    ]);
    const byId = new Map(rows.map((r: Record<string, unknown>) => [toInt(r.id), r]));
    return ids.filter((id) => byId.has(id)).map((id) => toListItem(byId.get(id)!, memberships.get(id) ?? []));
  }

  async get(orgId: number, id: number) {
    // The engagement counters in the same read: no row (never engaged) reads as zeros (toDetail).
    const row = await this.knex('subscribers as s')
      .leftJoin('subscriber_engagement as e', 'e.subscriber_id', 's.id')
      .where({ 's.organization_id': orgId, 's.id': id })
      .first([...DETAIL_COLUMNS.map((c) => `s.${c} as ${c}`), 'e.messages_opened', 'e.messages_clicked']);
    if (!row) throw notFound('Subscriber', id);
    const lists = await this.knex('list_subscribers as ls')
      .join('lists as l', 'l.id', 'ls.list_id')
      .where('ls.subscriber_id', id)
      .orderBy('l.id')
      .select('l.id', 'l.name', 'l.code');
    return toDetail(
      row,
      lists.map((l: Record<string, unknown>) => ({ id: toInt(l.id), name: toText(l.name), code: toText(l.code) })),
    );
  }

  /** The list ids to filter on: undefined for none, null when a named list does not exist (no result). */
  private async listFilter(
    orgId: number,
    listId: number | undefined,
    code: string | undefined,
  ): Promise<number[] | undefined | null> {
    const ids: number[] = [];
    if (listId !== undefined) {
      const found = await this.knex('lists').where({ organization_id: orgId, id: listId }).first('id');
      if (!found) throw validationError('list_id', 'exists', `List ${listId} does not exist`);
      ids.push(listId);
    }
    if (code !== undefined) {
      const found = await this.knex('lists').where({ organization_id: orgId, code }).first('id');
      if (!found) return null;
      if (!ids.includes(Number(found.id))) ids.push(Number(found.id));
    }
    return ids.length ? ids : undefined;
  }

  /**
   * One index leads, in subscriber id order, so a page stops after its rows whatever the audience
   * size: a list's members (list, status, subscriber), else a meta value (organization, key, value,
   * subscriber), else (organization, status, id). The other filters check each candidate through their
   * own index.
   */
  private filter(orgId: number, status: string, listIds: number[] | undefined, search: SubscriberSearch) {
    const meta = [...search.meta];
    let query: Knex.QueryBuilder;
    let idColumn: string;
    if (listIds) {
      query = this.knex('list_subscribers as d').where('d.list_id', listIds[0]).andWhere('d.subscriber_status', status);
      for (const listId of listIds.slice(1)) {
        this.whereAmong(
          query,
          'd.subscriber_id',
          this.knex('list_subscribers').select('subscriber_id').where({ list_id: listId }),
        );
      }
      idColumn = 'd.subscriber_id';
    } else if (meta.length) {
      const { key, value } = meta.shift()!;
      query = this.knex('subscriber_meta as d').where({
        'd.organization_id': orgId,
        'd.meta_key': key,
        'd.meta_value': value,
        'd.subscriber_status': status,
      });
      idColumn = 'd.subscriber_id';
    } else {
      query = this.knex('subscribers as s').where('s.organization_id', orgId).andWhere('s.status', status);
      idColumn = 's.id';
    }
    const needsRow = search.emails.length > 0 || search.createdAfter !== undefined;
    if (idColumn !== 's.id' && needsRow) query.join('subscribers as s', 's.id', idColumn);
    for (const email of search.emails) query.andWhere('s.email', email);
    if (search.createdAfter) query.andWhere('s.created_at', '>=', search.createdAfter);
    for (const { key, value } of meta) {
      this.whereAmong(
        query,
        idColumn,
        this.knex('subscriber_meta')
          .select('subscriber_id')
          .where({ organization_id: orgId, meta_key: key, meta_value: value, subscriber_status: status }),
      );
    }
    return { query, idColumn };
  }

  /**
   * The id column as the other filters see it. SQLite would otherwise drive the query from the values of
   * an `IN (subquery)` filter (every subscriber of a common meta value, say) and match them against
   * the next filter's values one by one: two such filters took a minute at 30,000 subscribers. Its
   * unary `+` keeps the lead index driving, in id order, and checks each candidate against the filters'
   * materialized sets; a page then stops after its rows. MySQL plans these as semi-joins already.
   */
  private whereAmong(query: Knex.QueryBuilder, idColumn: string, ids: Knex.QueryBuilder): void {
    query.whereRaw(`${dialectOfKnex(this.knex) === 'sqlite' ? '+' : ''}?? in ?`, [idColumn, ids]);
  }

  /**
   * A status or a single list: the maintained counters (or one membership index range). Anything
   * else: the matches, counted up to SEARCH_COUNT_CAP.
   */
  private async total(
    orgId: number,
    status: string,
    listIds: number[] | undefined,
    search: SubscriberSearch,
    filtered: Knex.QueryBuilder,
    idColumn: string,
  ) {
    const plain = !search.emails.length && !search.createdAfter && !search.meta.length;
    if (plain && !listIds) return { total: await statusCount(this.knex, orgId, status), capped: false };
    if (plain && listIds?.length === 1) {
      if (status === 'active') {
        // A list deleted since it was named has no members left to count.
        const list = await this.knex('lists').where({ id: listIds[0] }).first('active_count');
        return { total: list ? Number(list.active_count) : 0, capped: false };
      }
      const [{ n }] = await this.knex('list_subscribers')
        .where({ list_id: listIds[0], subscriber_status: status })
        .count({ n: '*' });
      return { total: Number(n), capped: false };
    }
    const limited = filtered
      .clone()
      .select({ id: idColumn })
      .limit(SEARCH_COUNT_CAP + 1);
    const [{ n }] = await this.knex.from(limited.as('matches')).count({ n: '*' });
    const total = Number(n);
    return total > SEARCH_COUNT_CAP ? { total: SEARCH_COUNT_CAP, capped: true } : { total, capped: false };
  }

  private async memberships(ids: number[]): Promise<Map<number, number[]>> {
    const map = new Map<number, number[]>();
    if (!ids.length) return map;
    const rows = await this.knex('list_subscribers')
      .whereIn('subscriber_id', ids)
      .orderBy('list_id')
      .select('subscriber_id', 'list_id');
    for (const r of rows as Array<Record<string, unknown>>) {
      const subscriberId = toInt(r.subscriber_id);
      const list = map.get(subscriberId) ?? [];
      list.push(toInt(r.list_id));
      map.set(subscriberId, list);
    }
    return map;
  }
}
