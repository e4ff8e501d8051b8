import { ipLiteralOf, type SecretBox } from '@switchboard/core';
import type { MonitorAddresses } from './addresses';

/** What stands for the password in a stored or shown endpoint. */
export const MASKED_PASSWORD = '***';
const MAX_LENGTH = 2048;

/**
 * A server's endpoint as `monitor_servers` keeps it (docs/decisions.md, server-monitor, Endpoint
 * credentials): the URL with its password masked, which is all logs, alerts, the dashboard and API
 * answers ever show, and the password sealed apart.
 */
export interface StoredEndpoint {
  /** The URL, a password in it replaced by `***` (`https://user:***@host/`). */
  endpoint: string;
  /** The password sealed with the application key (core SecretBox); null when the URL has none. */
  endpoint_secret: string | null;
}

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
  if (url.length > MAX_LENGTH || shownEndpoint(url).length > MAX_LENGTH) return `longer than ${MAX_LENGTH} characters`;
  const parts = parsed(url);
  if (!parts) return 'not a valid URL';
  if (parts.protocol !== 'http:' && parts.protocol !== 'https:') return 'not an http(s) URL';
  const ip = ipLiteralOf(parts.hostname);
  return ip ? addresses.reason(ip) : null;
}

/** What to store for an endpoint: its password, if any, sealed and masked in the URL. */
export function sealEndpoint(url: string, secrets: SecretBox): StoredEndpoint {
  const parts = parsed(url);
  if (!parts?.password) return { endpoint: url, endpoint_secret: null };
  return { endpoint: shownEndpoint(url), endpoint_secret: secrets.seal(parts.password) };
}

/**
 * What to store for an endpoint given in place of `current`. The endpoint exactly as it is shown
 * (`user:***@`, the server read and written back whole) keeps the password sealed before. A masked
 * password in any other URL is null: the password would go to a host or path it was not given for, so
 * the caller asks for it again.
 */
export function sealEndpointKeeping(url: string, current: StoredEndpoint, secrets: SecretBox): StoredEndpoint | null {
  if (!current.endpoint_secret || parsed(url)?.password !== MASKED_PASSWORD) return sealEndpoint(url, secrets);
  return url === current.endpoint ? { endpoint: url, endpoint_secret: current.endpoint_secret } : null;
}

/** The URL a check requests: the stored endpoint with its password opened again. */
export function openEndpoint(stored: StoredEndpoint, secrets: SecretBox): string {
  if (!stored.endpoint_secret) return stored.endpoint;
  const url = new URL(stored.endpoint);
  // Sealed as the URL spells it (percent-encoded), so it goes back unchanged.
  url.password = secrets.open(stored.endpoint_secret);
  return url.href;
}

/** Any endpoint URL with its password masked (`https://user:***@host/`), for what people read. */
export function shownEndpoint(url: string): string {
  const parts = parsed(url);
  if (!parts?.password || parts.password === MASKED_PASSWORD) return url;
  parts.password = MASKED_PASSWORD;
  return parts.href;
}
