import type { Middleware } from 'koa';
import helmet from 'koa-helmet';

/** `X-Content-Type-Options: nosniff` on every response: browsers take the type we send, never guess one. */
export const noSniff = (): Middleware => helmet.xContentTypeOptions();

export interface HtmlPageOptions {
  /** Origins a page may fetch from besides its own (the API's public URL when it is another origin). */
  connectSources: string[];
}

/**
 * On every HTML response (the API docs today), whatever route sent it: a content security policy that
 * lets a page load only its own scripts, styles, images and fonts and talk only to the API, and that
 * no other site may frame it (`frame-ancestors 'none'`, and `X-Frame-Options: DENY` for older browsers).
 * The headers are set once the response is known to be HTML.
 */
export function htmlPageHeaders(options: HtmlPageOptions): Middleware {
  const policy = helmet.contentSecurityPolicy({
    useDefaults: false,
    directives: {
      defaultSrc: ["'self'"],
      scriptSrc: ["'self'"],
      styleSrc: ["'self'"],
      imgSrc: ["'self'", 'data:'],
      fontSrc: ["'self'", 'data:'],
      connectSrc: ["'self'", ...options.connectSources],
      objectSrc: ["'none'"],
      baseUri: ["'none'"],
      formAction: ["'self'"],
      frameAncestors: ["'none'"],
    },
  });
  const frameOptions = helmet.xFrameOptions({ action: 'deny' });
  const done = async () => undefined;
  return async (ctx, next) => {
    await next();
    if (!ctx.response.is('html')) return;
    await policy(ctx, done);
    await frameOptions(ctx, done);
  };
}
