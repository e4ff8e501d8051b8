/** The campaign plugin's options for searches (`plugins.campaign.options.search`). */
export interface SearchOptions {
  /**
   * Bytes of substring-index rows one search reads, about (checked between its windows, the first of
   * which is always read): one that reaches this before it has found a match of its page is refused as
   * too broad (docs/decisions.md, Search).
   */
  readBudgetBytes: number;
}

export const SEARCH_OPTIONS = Symbol('campaign.searchOptions');

export const searchOptionsSchema = {
  type: 'object',
  additionalProperties: false,
  default: {},
  properties: {
    // At a million subscribers the benchmark's searches read up to 1.4 MB of compacted rows, and up to 7.5 MB
    // (about 45 ms, 140 to 190 ms at p95 on a busy machine) while a large import's rows are not compacted yet.
    readBudgetBytes: { type: 'integer', minimum: 1, default: 4 * 2 ** 20 },
  },
} as const;
