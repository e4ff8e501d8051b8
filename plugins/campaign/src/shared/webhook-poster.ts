import { request } from 'undici';

/** What a receiver answered a POST, or why it could not. */
export interface PostOutcome {
  status: number | null;
  error: string | null;
  latencyMs: number;
}

const TIMEOUT_MS = 10_000;
/** Of a receiver's answer only this much is read, then the rest is thrown away. */
const BODY_BYTES = 64 * 1024;

/** POSTs a JSON body to a tenant's receiver: a time limit, redirects not followed (undici does not), the answer read bounded. */
export async function postJson(url: string, headers: Record<string, string>, body: string): Promise<PostOutcome> {
  const started = performance.now();
  try {
    const answer = await request(url, {
      method: 'POST',
      headers,
      body,
      headersTimeout: TIMEOUT_MS,
      bodyTimeout: TIMEOUT_MS,
    });
    let read = 0;
    for await (const chunk of answer.body) {
      read += (chunk as Buffer).length;
      if (read > BODY_BYTES) {
        answer.body.destroy();
        break;
      }
    }
    return { status: answer.statusCode, error: null, latencyMs: Math.round(performance.now() - started) };
  } catch (err) {
    return { status: null, error: (err as Error).message, latencyMs: Math.round(performance.now() - started) };
  }
}
