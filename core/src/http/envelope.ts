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
