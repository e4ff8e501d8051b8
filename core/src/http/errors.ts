/** Application error codes and the one HTTP status each maps to, for the whole engine. */
export const ERROR_STATUS = {
  BAD_REQUEST: 400,
  AUTH_INVALID_TOKEN: 401,
  /** A signed request (an inbound webhook) whose signature does not hold. */
  SIGNATURE_INVALID: 401,
  /** Nothing to do for want of a paid, active subscription (server monitor: 402). */
  PAYMENT_REQUIRED: 402,
  AUTH_INSUFFICIENT_PERMISSIONS: 403,
  QUOTA_EXCEEDED: 403,
  /** A request to something switched off (an inactive inbound webhook endpoint). */
  INACTIVE: 403,
  RESOURCE_NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  DUPLICATE_ENTRY: 409,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  VALIDATION_ERROR: 422,
  RATE_LIMIT_EXCEEDED: 429,
  INTERNAL_ERROR: 500,
  NOT_IMPLEMENTED: 501,
  SERVICE_UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export interface ErrorDetails {
  field: string;
  rule: string;
}

export class AppError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: ErrorDetails,
    /** Extra top-level members of the error object, e.g. retry_after. */
    readonly extra?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'AppError';
    this.status = ERROR_STATUS[code];
  }
}

export const notFound = (what: string, id?: number | string) =>
  new AppError('RESOURCE_NOT_FOUND', id === undefined ? `${what} not found` : `${what} ${id} not found`);

export const validationError = (field: string, rule: string, message: string) =>
  new AppError('VALIDATION_ERROR', message, { field, rule });

export const duplicateEntry = (field: string, message: string) =>
  new AppError('DUPLICATE_ENTRY', message, { field, rule: 'unique' });
