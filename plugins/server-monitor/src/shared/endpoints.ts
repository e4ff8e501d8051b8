import { ipLiteralOf } from '@switchboard/core';
import type { MonitorAddresses } from './addresses';

const MAX_LENGTH = 2048;

const parsed = (url: string): URL | null => {
  try {
    return new URL(url);
  } catch {
    return null;
  }
};

/**
 * Why a URL cannot be a server's endpoint, or null: what the import and the servers API check before
 * saving. Not a URL, another scheme than http(s), or a link-local or metadata address given as such
 * (unless MONITOR_ALLOWED_RANGES allows it). Names are not resolved here: each check's connection is
 * checked again (MonitorAddresses), so a name that resolves elsewhere later gains nothing.
 */
export function endpointProblem(url: string, addresses: MonitorAddresses): string | null {
  if (!url) return 'missing';
  if (url.length > MAX_LENGTH) return `longer than ${MAX_LENGTH} characters`;
  const parts = parsed(url);
  if (!parts) return 'not a valid URL';
  if (parts.protocol !== 'http:' && parts.protocol !== 'https:') return 'not an http(s) URL';
  const ip = ipLiteralOf(parts.hostname);
  return ip ? addresses.reason(ip) : null;
}
