import type { MetaData } from '../../shared/meta-data';

/**
 * A subscriber's search rows (one row per meta value in subscriber_meta; the substring index of its
 * name and email, search/gram-rows.ts) are derived from its subscribers row alone. They are found again by
 * primary key, computed from that row: the tables need no index on subscriber_id and no foreign key,
 * which spares an index tree and a foreign-key check for every row an import writes.
 */
export interface SearchSource {
  id: number;
  email: string;
  status: string;
  first_name?: string | null;
  last_name?: string | null;
  /** The object, or the JSON text of the subscribers column. */
  meta_data?: MetaData | string | null;
}
