import type { Dispatcher } from 'undici';
import { loadOnFirstUse } from '@switchboard/core';

const undici = loadOnFirstUse(() => require('undici') as typeof import('undici'));

export interface CheckOutcome {
  up: boolean;
  /** The HTTP status code of the answer, or `timeout` / `unreachable`. */
  status: string;
  responseMs: number | null;
  error: string | null;
}

export interface HttpCheckOptions {
  timeoutMs: number;
  maxRedirections: number;
}

/**
 * One HTTP(S) GET of a server's endpoint through undici: redirects followed, the body discarded, the
 * certificate not judged (a self-signed or expired certificate is the SSL check's business, not a
 * failure of the server). Up: an answer below 400.
 */
export class HttpChecker {
  private readonly dispatcher: Dispatcher;

  constructor(private readonly options: HttpCheckOptions = { timeoutMs: 10_000, maxRedirections: 5 }) {
    const { Agent, interceptors } = undici();
    this.dispatcher = new Agent({
      connect: { rejectUnauthorized: false, timeout: options.timeoutMs },
      keepAliveTimeout: 10_000,
    }).compose(interceptors.redirect({ maxRedirections: options.maxRedirections }));
  }

  async check(url: string): Promise<CheckOutcome> {
    const started = performance.now();
    try {
      const answer = await undici().request(url, {
        method: 'GET',
        dispatcher: this.dispatcher,
        headersTimeout: this.options.timeoutMs,
        bodyTimeout: this.options.timeoutMs,
        signal: AbortSignal.timeout(this.options.timeoutMs),
        headers: { 'user-agent': 'Switchboard-Monitor/1.0' },
      });
      await answer.body.dump({ limit: 64 * 1024 }).catch(() => undefined);
      const status = answer.statusCode;
      return {
        up: status < 400,
        status: String(status),
        responseMs: Math.round(performance.now() - started),
        error: status < 400 ? null : `answered ${status}`,
      };
    } catch (err) {
      const e = err as Error & { code?: unknown };
      // undici's codes are strings (UND_ERR_CONNECT_TIMEOUT); the abort signal's DOMException has code 23.
      const code = typeof e.code === 'string' ? e.code : undefined;
      const timedOut = e.name === 'TimeoutError' || /timeout/i.test(code ?? '') || /timeout/i.test(e.message);
      const error = timedOut
        ? `timed out after ${this.options.timeoutMs} ms${code ? ` (${code})` : ''}`
        : code
          ? `${code}: ${e.message}`
          : e.message;
      return { up: false, status: timedOut ? 'timeout' : 'unreachable', responseMs: null, error: error.slice(0, 255) };
    }
  }

  private closing?: Promise<void>;

  /** Once: a second close (the CLI's own, then the plugin's stop) waits for the first. */
  close(): Promise<void> {
    return (this.closing ??= this.dispatcher.close());
  }
}
