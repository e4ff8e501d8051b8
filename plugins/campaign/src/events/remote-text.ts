import type { Dispatcher } from 'undici';
import { AppError, loadOnFirstUse, OutboundGuard } from '@switchboard/core';

const undici = loadOnFirstUse(() => require('undici') as typeof import('undici'));

/** Reads a URL's text: the certificates and confirmations of provider webhooks. Tests register their own. */
export type RemoteText = (url: string) => Promise<string>;
export const REMOTE_TEXT = 'campaign.RemoteText';

const TIMEOUT_MS = 5000;
const MAX_BYTES = 64 * 1024;

/** Reads an answer's body up to `max` bytes, then drops the rest; `cut` says whether there was more. */
async function readAtMost(body: Dispatcher.ResponseData['body'], max: number) {
  const chunks: Buffer[] = [];
  let read = 0;
  for await (const chunk of body) {
    read += (chunk as Buffer).length;
    if (read > max) {
      body.destroy();
      return { bytes: Buffer.concat(chunks), cut: true };
    }
    chunks.push(chunk as Buffer);
  }
  return { bytes: Buffer.concat(chunks), cut: false };
}

/**
 * Only URLs an adapter has checked come here (Amazon SNS's own), read through the outbound guard like
 * every request made for a tenant, no redirect followed. A failure is a 503: the provider tries again
 * later, which is what a passing network problem needs.
 */
export const remoteTextThrough =
  (guard: OutboundGuard): RemoteText =>
  async (url) => {
    try {
      const refused = guard.checkUrl(url);
      if (refused) throw new Error(refused);
      const answer = await undici().request(url, {
        dispatcher: guard.dispatcher,
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
      const { bytes, cut } = await readAtMost(answer.body, MAX_BYTES);
      if (answer.statusCode < 200 || answer.statusCode >= 300) throw new Error(`answered ${answer.statusCode}`);
      if (cut) throw new Error(`answered more than ${MAX_BYTES} bytes`);
      return bytes.toString('utf8');
    } catch (err) {
      throw new AppError('SERVICE_UNAVAILABLE', `Could not read ${url}: ${(err as Error).message}`);
    }
  };
