import { AppError } from '@switchboard/core';

/** Reads a URL's text: the certificates and confirmations of provider webhooks. Tests register their own. */
export type RemoteText = (url: string) => Promise<string>;
export const REMOTE_TEXT = 'campaign.RemoteText';

const TIMEOUT_MS = 5000;
const MAX_BYTES = 64 * 1024;

/**
 * Only URLs an adapter has checked come here (Amazon SNS's own). A failure is a 503: the provider tries
 * again later, which is what a passing network problem needs.
 */
export const fetchRemoteText: RemoteText = async (url) => {
  try {
    const response = await fetch(url, { redirect: 'error', signal: AbortSignal.timeout(TIMEOUT_MS) });
    if (!response.ok) throw new Error(`answered ${response.status}`);
    const text = await response.text();
    if (text.length > MAX_BYTES) throw new Error(`answered more than ${MAX_BYTES} bytes`);
    return text;
  } catch (err) {
    throw new AppError('SERVICE_UNAVAILABLE', `Could not read ${url}: ${(err as Error).message}`);
  }
};
