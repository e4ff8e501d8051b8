import type { PluginApi, PluginContext } from '@switchboard/core';
import { TRACK_PATH } from '../shared/paths';
import { escapeHtml } from '../shared/html';
import { TrackingService } from './tracking-service';
import { TRACKED_LINK } from './tracking-links';

/** A transparent 1x1 GIF. */
const PIXEL = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');
const token = { type: 'string', minLength: 3, maxLength: 200 } as const;

/** The open pixel and the click redirect of tracked mail: no API token, the signed token is the proof. */
export function trackingRoutes(api: PluginApi, ctx: PluginContext): void {
  const tracking = ctx.container.resolve(TrackingService);
  api
    .group({ prefix: TRACK_PATH, tag: 'campaign', auth: 'none', rateLimitCounts: 'refusals' })
    .get(
      '/o',
      {
        summary: 'Open pixel of a tracked mail (counts the first open)',
        query: { type: 'object', required: ['token'], properties: { token } },
        response: { description: 'a 1x1 GIF', contentType: 'image/gif' },
        answers: { 404: 'RESOURCE_NOT_FOUND: the token is not one of ours' },
      },
      async ({ query, ctx: http }) => {
        await tracking.open(query.token);
        http.type = 'image/gif';
        http.set('Cache-Control', 'no-store');
        return PIXEL;
      },
    )
    .get(
      '/c',
      {
        summary: 'Click redirect of a tracked mail (counts the first click, then redirects to u)',
        query: {
          type: 'object',
          required: ['token', 'u'],
          properties: { token, u: { type: 'string', minLength: 8, ...TRACKED_LINK } },
        },
        response: { status: 302, description: 'a redirect to the link', contentType: 'text/html' },
        answers: { 404: 'RESOURCE_NOT_FOUND: the token is not one of ours, or the link is not one of its mail' },
      },
      async ({ query, ctx: http }) => {
        const url = await tracking.click(query.token, query.u);
        http.redirect(url);
        // Koa types its redirect by the Accept header; the document names one type.
        http.type = 'text/html';
        return `Redirecting to ${escapeHtml(url)}`;
      },
    );
}
