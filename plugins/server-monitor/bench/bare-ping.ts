import Koa from 'koa';
import { createKnex, hashToken } from '@switchboard/core';

/**
 * The ping baseline, as its own process: a bare Koa route running the same UPDATE as a heartbeat ping,
 * the token's digest included, with no key check, lookup of a missing heartbeat, or envelope.
 */
const knex = createKnex(process.env.DATABASE_URL!);
const app = new Koa();
app.use(async (ctx) => {
  const token = hashToken(ctx.path.split('/').pop()!);
  if (ctx.path === '/health') {
    ctx.body = { ok: true };
    return;
  }
  const now = new Date();
  const updated = await knex('monitor_heartbeats')
    .where({ token })
    .whereNot({ state: 'down' })
    .update({
      last_ping_at: now,
      state: 'up',
      due_at: knex.raw('DATE_ADD(?, INTERVAL (interval_seconds + grace_seconds) SECOND)', [now]),
      updated_at: now,
    });
  ctx.status = updated ? 200 : 404;
  ctx.body = { success: updated > 0 };
});
const server = app.listen(Number(process.env.PORT), '127.0.0.1');
process.once('SIGTERM', () => server.close(() => void knex.destroy()));
