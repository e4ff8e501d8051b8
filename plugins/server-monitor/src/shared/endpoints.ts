import { ipLiteralOf, type SecretBox } from '@switchboard/core';
import type { MonitorAddresses } from './addresses';

/** What stands for a secret (the password, a secret query value) in a stored or shown endpoint. */
export const MASK = '***';
const MAX_LENGTH = 2048;

/**
 * A server's endpoint as `monitor_servers` keeps it (docs/decisions.md, server-monitor, Endpoint
 * credentials): the URL with its secrets masked, which is all logs, alerts, the dashboard and API answers
 * ever show, and the secrets sealed apart.
 */
export interface StoredEndpoint {
  /** The URL, its password and secret query values replaced by `***` (`https://user:***@host/?token=***`). */
  endpoint: string;
  /**
   * The secrets sealed with the application key (core SecretBox); null when the URL has none. A password
   * alone is sealed as it is (as migration 1.2/04 wrote it); with secret query values, as JSON
   * (`{"password":..,"query":[..]}`), which a password cannot start with: the URL spells `{` as `%7B` there.
   */
  endpoint_secret: string | null;
}

interface Secrets {
  password?: string;
  /** The raw values of the secret query parameters that have one, in the order they appear. */
  query?: string[];
}

/**
 * A query parameter whose value is a credential, by its name's last word: `token`, `api_key`, `apiKey`,
 * `access_token`, `client_secret`, `sig`... (what health URLs of hosted services carry).
 */
const SECRET_WORD =
  /(?:^|[^a-z0-9])(?:token|key|apikey|secret|password|passwd|pwd|pass|auth|sig|signature|credentials?)$/i;
const CAMEL_SECRET = /[a-z0-9](?:Token|Key|Secret|Password|Auth|Signature)$/;

const parsed = (url: string): URL | null => {
  try {
    return new URL(url);
  } catch {
    return null;
  }
};

const nameOf = (raw: string): string => {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '));
  } catch {
    return raw;
  }
};

export const isSecretParameter = (rawName: string): boolean => {
  const name = nameOf(rawName);
  return SECRET_WORD.test(name) || CAMEL_SECRET.test(name);
};

/**
 * Each secret query parameter with a value, in order: its place in the raw query (`a=1&token=x`) and
 * its raw value. The query is walked as written, not re-serialized, so what is requested stays byte for byte.
 */
function secretValues(search: string): Array<{ part: number; name: string; value: string }> {
  if (search.length < 2) return [];
  const found: Array<{ part: number; name: string; value: string }> = [];
  search
    .slice(1)
    .split('&')
    .forEach((piece, part) => {
      const eq = piece.indexOf('=');
      if (eq <= 0 || eq === piece.length - 1) return;
      const name = piece.slice(0, eq);
      if (isSecretParameter(name)) found.push({ part, name, value: piece.slice(eq + 1) });
    });
  return found;
}

/** `search` with the values of `found` replaced, in order, by `values`. */
function withValues(search: string, found: ReturnType<typeof secretValues>, values: string[]): string {
  const pieces = search.slice(1).split('&');
  found.forEach(({ part, name }, k) => (pieces[part] = `${name}=${values[k]}`));
  return `?${pieces.join('&')}`;
}

const sealed = (secrets: Secrets, box: SecretBox): string | null => {
  if (secrets.query?.length) return box.seal(JSON.stringify(secrets));
  return secrets.password ? box.seal(secrets.password) : null;
};

const opened = (text: string): Secrets => (text.startsWith('{') ? (JSON.parse(text) as Secrets) : { password: text });

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

/** What to store for an endpoint: its password and secret query values, if any, sealed and masked in the URL. */
export function sealEndpoint(url: string, secrets: SecretBox): StoredEndpoint {
  const parts = parsed(url);
  const query = parts ? secretValues(parts.search) : [];
  if (!parts || (!parts.password && !query.length)) return { endpoint: url, endpoint_secret: null };
  return {
    endpoint: shownEndpoint(url),
    endpoint_secret: sealed(
      { password: parts.password || undefined, query: query.length ? query.map((q) => q.value) : undefined },
      secrets,
    ),
  };
}

/** Whether a URL holds the mask where a secret goes: it is a stored endpoint, or was copied from one. */
const holdsMask = (url: string): boolean => {
  const parts = parsed(url);
  return !!parts && (parts.password === MASK || secretValues(parts.search).some((q) => q.value === MASK));
};

/**
 * What to store for an endpoint given in place of `current`. The endpoint exactly as it is shown
 * (`user:***@`, `?token=***`: the server read and written back whole) keeps the secrets sealed before. A
 * mask in any other URL is null: a secret would go to a host or path it was not given for, so the caller
 * asks for it again.
 */
export function sealEndpointKeeping(url: string, current: StoredEndpoint, secrets: SecretBox): StoredEndpoint | null {
  if (!current.endpoint_secret || !holdsMask(url)) return sealEndpoint(url, secrets);
  return url === current.endpoint ? { endpoint: url, endpoint_secret: current.endpoint_secret } : null;
}

/** The URL a check requests: the stored endpoint with its secrets opened again. */
export function openEndpoint(stored: StoredEndpoint, secrets: SecretBox): string {
  if (!stored.endpoint_secret) return stored.endpoint;
  const kept = opened(secrets.open(stored.endpoint_secret));
  const url = new URL(stored.endpoint);
  // Sealed as the URL spells them (percent-encoded), so they go back unchanged.
  if (kept.password) url.password = kept.password;
  if (kept.query?.length) url.search = withValues(url.search, secretValues(url.search), kept.query);
  return url.href;
}

/**
 * The URL a stored endpoint is requested at, or null when its secrets do not open (sealed under another
 * APP_KEY): what tells two servers apart. Two endpoints shown alike (`?token=***`) are one server only when
 * they request the same URL with the same secrets.
 */
export function requestedUrl(stored: StoredEndpoint, secrets: SecretBox): string | null {
  try {
    return openEndpoint(stored, secrets);
  } catch {
    return null;
  }
}

/** Any endpoint URL with its password and secret query values masked, for what people read. */
export function shownEndpoint(url: string): string {
  const parts = parsed(url);
  if (!parts) return url;
  const query = secretValues(parts.search).filter((q) => q.value !== MASK);
  if ((!parts.password || parts.password === MASK) && !query.length) return url;
  if (parts.password) parts.password = MASK;
  if (query.length)
    parts.search = withValues(
      parts.search,
      query,
      query.map(() => MASK),
    );
  return parts.href;
}
