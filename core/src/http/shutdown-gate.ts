import type { Middleware } from 'koa';
import { AppError } from './errors';

/**
 * Counts the requests in flight and, once closing, turns new ones away before they touch a pool:
 * the server stops accepting connections, but a keep-alive connection may still bring requests, and
 * a request whose client hung up keeps running with no connection left to wait for.
 */
export class ShutdownGate {
  private closing = false;
  private inFlight = 0;
  private onIdle: (() => void) | undefined;

  middleware(): Middleware {
    return async (ctx, next) => {
      if (this.closing) {
        ctx.set('Connection', 'close');
        throw new AppError('SERVICE_UNAVAILABLE', 'The server is shutting down: send the request again');
      }
      this.inFlight += 1;
      try {
        await next();
      } finally {
        this.inFlight -= 1;
        // The client's next request goes over a new connection, to a process that stays.
        if (this.closing) ctx.set('Connection', 'close');
        if (this.inFlight === 0) this.onIdle?.();
      }
    };
  }

  /** From now on every request is answered 503 with `Connection: close`. */
  close(): void {
    this.closing = true;
  }

  /** Resolves once no request is in flight, or after `timeoutMs` (false then). */
  drained(timeoutMs: number): Promise<boolean> {
    if (this.inFlight === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.onIdle = undefined;
        resolve(false);
      }, timeoutMs);
      this.onIdle = () => {
        clearTimeout(timer);
        this.onIdle = undefined;
        resolve(true);
      };
    });
  }
}
