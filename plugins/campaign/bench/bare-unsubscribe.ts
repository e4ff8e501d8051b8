import Koa from 'koa';
import Router from '@koa/router';
import { createKnex } from '@switchboard/core';

/**
 * The baseline of the one-click benchmark: a bare Koa route taking the same form POST and writing the
 * subscriber's unsubscribe with one UPDATE, with no link signature, rate limit, counters, search rows or events.
 */
const knex = createKnex(process.env.DATABASE_URL!);
const organizationId = Number(process.env.BENCH_ORG_ID);
const app = new Koa();
const router = new Router();
router.get('/', (ctx) => {
  ctx.body = 'ok';
});
router.post('/unsubscribe/:id', async (ctx) => {
  await new Promise((resolve) => ctx.req.resume().once('end', resolve));
  await knex('subscribers')
    .where({ organization_id: organizationId, id: Number(ctx.params.id) })
    .update({ status: 'unsubscribed', unsubscribed_at: new Date(), updated_at: new Date() });
  ctx.body = 'Unsubscribed';
});
app.use(router.routes());
const server = app.listen(Number(process.env.PORT), '127.0.0.1');
process.once('SIGTERM', () => server.close(() => void knex.destroy()));
