import Koa from 'koa';
import Router from '@koa/router';
import { createKnex } from '@switchboard/core';

/**
 * The baseline of the api benchmark: a bare Koa route doing the same single select as
 * GET /api/v1/users/:id, with no auth, rate limit, validation or envelope.
 */
const knex = createKnex(process.env.DATABASE_URL!);
const app = new Koa();
const router = new Router();
router.get('/health', (ctx) => {
  ctx.body = { ok: true };
});
router.get('/users/:id', async (ctx) => {
  const row = await knex('users')
    .where({ organization_id: Number(process.env.BENCH_ORG_ID), id: Number(ctx.params.id) })
    .first('id', 'name', 'email', 'role', 'phone', 'created_at', 'updated_at');
  ctx.body = row;
});
app.use(router.routes());
const server = app.listen(Number(process.env.PORT), '127.0.0.1');
process.once('SIGTERM', () => server.close(() => void knex.destroy()));
