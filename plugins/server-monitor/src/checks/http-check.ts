import type { Agent, Dispatcher } from 'undici';
import { guardedConnector, loadOnFirstUse } from '@switchboard/core';
import { MONITOR_ADDRESS_REFUSED, MonitorAddresses } from '../shared/addresses';
import { percentDecoded } from '../shared/percent-decoded';

const undici = loadOnFirstUse(() => require('undici') as typeof import('undici'));

/** The answers that send a client on, as undici follows them (a 304 with a Location does not). */
const REDIRECTS = new Set([300, 301, 302, 303, 307, 308]);
// eslint-disable-next-line no-control-regex
const CONTROL = /[\x00-\x1f\x7f]+/g;
/** The body read of an answer (the rest is not waited for): enough to see it arrive whole or cut off. */
const BODY_READ = 64 * 1024;
/**
 * Response headers taken, as browsers do (Chrome's limit): undici's default is Node's 16 KiB, and a site
 * setting many cookies or a long Content-Security-Policy was down (unreachable) while it served everyone.
 */
const MAX_HEADER_BYTES = 256 * 1024;

export interface CheckOutcome {
  up: boolean;
  /** The HTTP status code of the answer, or `timeout` / `unreachable` / `refused` (an address not allowed). */
  status: string;
  responseMs: number | null;
  error: string | null;
}

export interface HttpCheckOptions {
  timeoutMs: number;
  maxRedirections: number;
}

/** A URL's user and password become a Basic authorization header: undici does not send them itself. */
function credentialsOf(endpoint: string): { url: string; authorization?: string } {
  const url = new URL(endpoint);
  if (!url.username && !url.password) return { url: endpoint };
  const decoded = (text: string) => percentDecoded(text) ?? text;
  const user = `${decoded(url.username)}:${decoded(url.password)}`;
  url.username = '';
  url.password = '';
  return { url: url.href, authorization: `Basic ${Buffer.from(user).toString('base64')}` };
}

/**
 * One HTTP(S) GET of a server's endpoint through undici: redirects followed, the body read (up to 64 KiB: an
 * answer cut off or stalled is down), the
 * certificate not judged (a self-signed or expired certificate is the SSL check's business, not a
 * failure of the server). Up: an answer below 400, not a redirect still once the redirects allowed are
 * spent. Every connection is checked against MonitorAddresses
 * on the address it goes to, before it is made (a refused one: status `refused`); a redirect from a
 * public address to a private or loopback one is not followed.
 */
export class HttpChecker {
  private readonly agents = new Set<Agent>();
  private shared?: Agent;
  /** Closed: the engine stops, and what a check ended with since says nothing of its server. */
  closed = false;

  constructor(
    private readonly options: HttpCheckOptions,
    private readonly addresses: MonitorAddresses,
  ) {}

  /**
   * Most endpoints answer without a redirect: their GET goes through one shared agent, whose connections
   * are kept and reused from check to check (each new one checked on its address). An answer that
   * redirects is checked again from the start by an agent of its own, which follows the redirects under
   * the public-to-private rule (the first hop is asked twice, for those endpoints only).
   */
  async check(endpoint: string): Promise<CheckOutcome> {
    let started = performance.now();
    let firstStatus: number;
    try {
      const first = await this.get(endpoint, this.sharedAgent());
      if (!(first.status >= 300 && first.status < 400 && first.redirects)) return this.outcome(first.status, started);
      firstStatus = first.status;
    } catch (err) {
      return this.failure(err as Error & { code?: unknown });
    }
    // The chain's time as asked again, from its first hop: the first ask's is not the server's twice over.
    started = performance.now();
    const agent = this.agentOfOneCheck();
    try {
      const dispatcher = agent.compose(
        undici().interceptors.redirect({ maxRedirections: this.options.maxRedirections }),
      );
      const last = await this.get(endpoint, dispatcher);
      // Still a redirect once the redirects allowed are spent: a chain with no end, as a browser says
      // (with none allowed, a redirect is an answer like any other below 400).
      if (this.options.maxRedirections > 0 && REDIRECTS.has(last.status) && last.redirects)
        return {
          up: false,
          status: String(last.status),
          responseMs: Math.round(performance.now() - started),
          error: `too many redirects (more than ${this.options.maxRedirections})`,
        };
      return this.outcome(last.status, started);
    } catch (err) {
      // undici refuses a URL the chain asked before (a page redirecting to itself, or two to each other).
      if (/^Redirect loop detected/.test((err as Error).message))
        return {
          up: false,
          status: String(firstStatus),
          responseMs: Math.round(performance.now() - started),
          error: 'too many redirects (a loop)',
        };
      return this.failure(err as Error & { code?: unknown });
    } finally {
      this.agents.delete(agent);
      await agent.destroy().catch(() => undefined);
    }
  }

  private async get(endpoint: string, dispatcher: Dispatcher): Promise<{ status: number; redirects: boolean }> {
    const { url, authorization } = credentialsOf(endpoint);
    const answer = await undici().request(url, {
      method: 'GET',
      dispatcher,
      headersTimeout: this.options.timeoutMs,
      bodyTimeout: this.options.timeoutMs,
      signal: AbortSignal.timeout(this.options.timeoutMs),
      // Dropped by the redirect interceptor when a redirect leaves the origin.
      headers: { 'user-agent': 'Switchboard-Monitor/1.0', ...(authorization && { authorization }) },
    });
    // Read, not dumped: dump() settles on a body cut off or never ending alike, and a server that crashed
    // half way through its answer, or stalled in it, was up (session 34).
    try {
      let read = 0;
      for await (const chunk of answer.body) if ((read += (chunk as Buffer).length) >= BODY_READ) break;
    } catch (err) {
      throw Object.assign(err as Error, { bodyCutOff: true });
    }
    return { status: answer.statusCode, redirects: answer.headers.location !== undefined };
  }

  private outcome(status: number, started: number): CheckOutcome {
    return {
      up: status < 400,
      status: String(status),
      responseMs: Math.round(performance.now() - started),
      error: status < 400 ? null : `answered ${status}`,
    };
  }

  /** The agent of the first hop of every check: no earlier connection of the check to judge it by. */
  private sharedAgent(): Agent {
    if (this.shared) return this.shared;
    const refuse = this.addresses.refusal(() => false);
    this.shared = new (undici().Agent)({
      keepAliveTimeout: 10_000,
      maxHeaderSize: MAX_HEADER_BYTES,
      connect: guardedConnector(refuse, { rejectUnauthorized: false, timeout: this.options.timeoutMs }),
    });
    this.agents.add(this.shared);
    return this.shared;
  }

  private failure(e: Error & { code?: unknown; bodyCutOff?: boolean }): CheckOutcome {
    if (e.code === MONITOR_ADDRESS_REFUSED)
      return { up: false, status: 'refused', responseMs: null, error: e.message.slice(0, 255) };
    // undici's codes are strings (UND_ERR_CONNECT_TIMEOUT); the abort signal's DOMException has code 23.
    const code = typeof e.code === 'string' ? e.code : undefined;
    const timedOut = e.name === 'TimeoutError' || /timeout/i.test(code ?? '') || /timeout/i.test(e.message);
    // A status line or header undici's parser cannot take (a 101, a 099) fails one of its assertions: the
    // assertion's text says nothing to the person on call.
    const unparsed = code === 'ERR_ASSERTION' || code?.startsWith('HPE_');
    const reason = unparsed ? `invalid HTTP answer (${code})` : described(code, e.message);
    const error = timedOut
      ? `timed out after ${this.options.timeoutMs} ms${code ? ` (${code})` : ''}${e.bodyCutOff ? ' in the body' : ''}`
      : e.bodyCutOff
        ? `answer cut off (${reason})`
        : reason;
    return {
      up: false,
      status: timedOut ? 'timeout' : 'unreachable',
      responseMs: null,
      // Control characters (an OpenSSL message's newlines) would reach the log note and the alert as they are.
      error: error.replace(CONTROL, ' ').trim().slice(0, 255),
    };
  }

  /**
   * An agent for one check, destroyed when it ends, so no connection (nor what its address allowed) is
   * shared between checks. Each connection it makes is checked on the addresses it is about to use; once
   * one connection went to a public address, every later one (a redirect elsewhere) must be public too.
   */
  private agentOfOneCheck(): Agent {
    let publicBefore = false;
    let publicNow = false;
    const refuse = this.addresses.refusal(() => publicBefore);
    const connect = guardedConnector(
      (address, hostname) => {
        const refused = refuse(address, hostname);
        if (!refused && this.addresses.isPublic(address)) publicNow = true;
        return refused;
      },
      { rejectUnauthorized: false, timeout: this.options.timeoutMs },
    );
    const agent = new (undici().Agent)({
      maxHeaderSize: MAX_HEADER_BYTES,
      // The check's connections come one after the other: a redirect is followed once its answer is read.
      connect: (options, callback) => {
        publicBefore ||= publicNow;
        publicNow = false;
        connect(options, callback);
      },
    });
    this.agents.add(agent);
    return agent;
  }

  /** Ends the checks still running (the engine stops); their outcomes are not the servers' (`closed`). */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.agents].map((agent) => agent.destroy().catch(() => undefined)));
  }
}

/** An error's code and message as the person on call reads them. */
function described(code: string | undefined, message: string): string {
  if (code === 'UND_ERR_HEADERS_OVERFLOW') return `answer headers over ${MAX_HEADER_BYTES / 1024} KiB (${code})`;
  return code ? `${code}: ${message}` : message;
}
