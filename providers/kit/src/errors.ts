/**
 * Why a request was refused. The inbound pipeline answers `malformed` with 400 and the others with 401;
 * an adapter throws nothing else for bad input.
 */
export type ProviderErrorKind = 'signature' | 'stale' | 'replayed' | 'forbidden' | 'malformed';

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
