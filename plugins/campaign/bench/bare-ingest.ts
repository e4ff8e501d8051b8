import Koa from 'koa';
import coBody from 'co-body';

/**
 * The ingest benchmark's baseline, as its own process: a bare Koa route that only parses the JSON body
 * it is sent, with no verification, database or envelope.
 */
const app = new Koa();
app.use(async (ctx) => {
  if (ctx.method === 'GET') {
    ctx.body = { ok: true };
    return;
  }
  const body = await coBody.json(ctx.req, { limit: '1mb' });
  ctx.body = { received: Array.isArray(body) ? body.length : 1 };
});
const server = app.listen(Number(process.env.PORT), '127.0.0.1');
process.once('SIGTERM', () => server.close());
