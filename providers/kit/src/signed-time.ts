import { malformed, ProviderError } from './errors';

/** How far a provider's signed timestamp may be from now: behind it, and ahead of it (clock skew). */
export interface SignedTimeWindow {
  maxAgeSeconds: number;
  maxAheadSeconds: number;
}

/**
 * A signed timestamp (UNIX seconds as text) refused as `stale` outside the window, as `malformed` when it
 * is no whole number of seconds (a clock that is off and a timestamp that cannot be read are told apart). The window behind now
 * covers the provider's own retries: a provider that sends a retry with the signature of its first try
 * must not have it refused once our endpoint is back (docs/decisions.md, Inbound provider webhooks).
 */
export function checkSignedTime(timestamp: string, now: Date, window: SignedTimeWindow): void {
  if (!/^\d{1,12}$/.test(timestamp))
    throw malformed(`The timestamp ${JSON.stringify(timestamp.slice(0, 40))} is not a whole number of seconds`);
  const age = now.getTime() / 1000 - Number(timestamp);
  if (age > window.maxAgeSeconds || -age > window.maxAheadSeconds)
    throw new ProviderError(
      'stale',
      `The timestamp is more than ${window.maxAgeSeconds} s before now or ${window.maxAheadSeconds} s after it`,
    );
}
