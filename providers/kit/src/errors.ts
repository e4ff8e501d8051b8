/**
 * Why a request was refused. The inbound pipeline answers `malformed` with 400 and the others with 401;
 * an adapter throws nothing else for bad input.
 */
const KINDS = ['signature', 'stale', 'replayed', 'forbidden', 'malformed'] as const;
export type ProviderErrorKind = (typeof KINDS)[number];

export class ProviderError extends Error {
  constructor(
    readonly kind: ProviderErrorKind,
    message: string,
  ) {
    super(message);
    this.name = 'ProviderError';
  }
}

export const malformed = (message: string) => new ProviderError('malformed', message);
export const badSignature = (message = 'The signature does not match') => new ProviderError('signature', message);

/**
 * Whether an error is an adapter's refusal. By shape as well as by class: an adapter installed with a copy
 * of the kit of its own throws that copy's ProviderError.
 */
export function isProviderError(error: unknown): error is ProviderError {
  if (error instanceof ProviderError) return true;
  const { name, kind } = (error ?? {}) as { name?: unknown; kind?: unknown };
  return name === 'ProviderError' && typeof kind === 'string' && KINDS.includes(kind as ProviderErrorKind);
}
