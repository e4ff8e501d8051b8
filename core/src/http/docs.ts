import path from 'node:path';
import Router from '@koa/router';
import send from 'koa-send';
// The package main loads the whole UI bundle; absolute-path only resolves the folder.
import getAbsoluteFSPath from 'swagger-ui-dist/absolute-path';

const ASSETS = new Set([
  'swagger-ui.css',
  'swagger-ui-bundle.js',
  'swagger-ui-standalone-preset.js',
  'favicon-32x32.png',
]);

const page = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Switchboard API</title>
<link rel="stylesheet" href="/api/docs/swagger-ui.css"></head>
<body><div id="ui"></div>
<script src="/api/docs/swagger-ui-bundle.js"></script>
<script src="/api/docs/swagger-init.js"></script>
</body></html>`;

// A file rather than an inline script, so the page's content security policy allows scripts from itself
// only; no validator badge, which would send the document's address to validator.swagger.io.
const init = `window.ui = SwaggerUIBundle({ url: '/api/openapi.json', dom_id: '#ui', validatorUrl: null });\n`;

/** GET /api/openapi.json and the Swagger UI at /api/docs, its assets served from the npm package. */
export function docsRouter(openapi: () => object): Router {
  const root = getAbsoluteFSPath();
  const router = new Router();
  let cached: object | undefined;
  router.get('/api/openapi.json', (ctx) => {
    ctx.body = cached ??= openapi();
  });
  router.get('/api/docs', (ctx) => {
    ctx.type = 'html';
    ctx.body = page;
  });
  router.get('/api/docs/swagger-init.js', (ctx) => {
    ctx.type = 'application/javascript';
    ctx.body = init;
  });
  router.get('/api/docs/:asset', async (ctx) => {
    if (!ASSETS.has(ctx.params.asset)) return;
    await send(ctx, path.basename(ctx.params.asset), { root, maxage: 86_400_000 });
  });
  return router;
}
