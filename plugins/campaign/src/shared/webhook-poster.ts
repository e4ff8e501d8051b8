import { OUTBOUND_ADDRESS_REFUSED, type OutboundGuard } from '@switchboard/core';
import { standardWebhookHeaders } from './standard-webhooks';
import { postBounded } from './bounded-post';

/** What a receiver answered a POST, or why it could not. */
export interface PostOutcome {
  status: number | null;
  error: string | null;
  latencyMs: number;
  /** The outbound guard refused the address: trying again would be refused too. */
  refused?: boolean;
}

/** Of a receiver's answer only this much is read, then the rest is thrown away. */
const BODY_BYTES = 64 * 1024;

/**
 * POSTs a JSON body to a tenant's receiver through the outbound guard (no private, loopback or metadata
 * address unless allowed, checked on every connection), within a time limit, redirects not followed
 * (undici does not), the answer read bounded.
 */
export async function postJson(
  url: string,
  headers: Record<string, string>,
  body: string,
  through: { guard: OutboundGuard; timeoutMs: number },
): Promise<PostOutcome> {
  const started = performance.now();
  const took = () => Math.round(performance.now() - started);
  const refused = through.guard.checkUrl(url);
  if (refused) return { status: null, error: refused, latencyMs: 0, refused: true };
  try {
    const status = await postBounded(through.guard.dispatcher, url, {
      headers,
      body,
      timeoutMs: through.timeoutMs,
      maxBytes: BODY_BYTES,
    });
    return { status, error: null, latencyMs: took() };
  } catch (err) {
    const error = err as Error & { code?: string; cause?: Error & { code?: string } };
    const reason =
      error.name === 'TimeoutError'
        ? `no answer within ${through.timeoutMs} ms`
        : (error.cause?.message ?? error.message);
    const refusedAddress = (error.cause?.code ?? error.code) === OUTBOUND_ADDRESS_REFUSED;
    return { status: null, error: reason, latencyMs: took(), ...(refusedAddress ? { refused: true } : {}) };
  }
}

/** A Standard Webhooks delivery: `body` POSTed with its id, signed anew with the time of this try. */
export function postSigned(
  url: string,
  signed: { key: Buffer; id: string; body: string; at: Date },
  through: { guard: OutboundGuard; timeoutMs: number },
): Promise<PostOutcome> {
  return postJson(url, standardWebhookHeaders(signed.key, signed.id, signed.at, signed.body), signed.body, through);
}

/** The wait before try `attempts + 1` of a delivery: doubling from `baseMs` up to `maxMs`, +-20% jitter. */
export const retryDelayMs = (baseMs: number, maxMs: number, attempts: number) =>
  Math.min(maxMs, baseMs * 2 ** Math.max(0, attempts - 1)) * (0.8 + Math.random() * 0.4);
