/** The response shapes the specs state; plugins pick the one their spec uses. */
export interface SuccessMeta {
  timestamp: string;
  version: string;
  [key: string]: unknown;
}

export const successBody = <T>(data: T, version: string, meta: Record<string, unknown> = {}) => ({
  success: true as const,
  data,
  meta: { timestamp: new Date().toISOString(), version, ...meta } as SuccessMeta,
});

export const messageBody = (message: string) => ({ success: true as const, message });

export interface PageRequest {
  page: number;
  per_page: number;
}

export const lastPage = (total: number, perPage: number) => Math.max(1, Math.ceil(total / perPage));

export const errorBody = (
  code: string,
  message: string,
  details?: { field: string; rule: string },
  extra?: Record<string, unknown>,
) => ({
  success: false as const,
  error: { code, message, ...(details ? { details } : {}), ...(extra ?? {}) },
});

export interface PageInfo {
  total: number;
  per_page: number;
  current_page: number;
  /** A page follows this one whatever `total` says (a capped total: "at least"). */
  more?: boolean;
}

/**
 * `{success, data, pagination}` with last page and neighbour urls; `pageUrl(n)` builds the link
 * to page n (the caller keeps the other query parameters).
 */
export const paginatedBody = <T>(
  data: T[],
  page: PageInfo,
  pageUrl: (page: number) => string,
  version: string,
  extra: Record<string, unknown> = {},
) => {
  // A capped total is "at least": a page with rows, or one with more after it, is never past the last.
  const last = Math.max(
    lastPage(page.total, page.per_page),
    data.length ? page.current_page : 1,
    page.more ? page.current_page + 1 : 1,
  );
  return {
    success: true as const,
    data,
    pagination: {
      total: page.total,
      per_page: page.per_page,
      current_page: page.current_page,
      last_page: last,
      next_page_url: page.current_page < last ? pageUrl(page.current_page + 1) : null,
      prev_page_url: page.current_page > 1 ? pageUrl(Math.min(page.current_page - 1, last)) : null,
      ...extra,
    },
    meta: { timestamp: new Date().toISOString(), version },
  };
};
