import path from 'node:path';
import request from 'supertest';
import usersProjects from '@switchboard/plugin-users-projects';
import { freePort } from '../src/cli';
import { load, LoadFigures, median } from './load';
import { startServer, stop } from './processes';
import { benchBackend, BenchOptions } from '@switchboard/core/testing';

const CONNECTIONS = 50;
const TARGET_RATIO = 0.5;
const TARGET_P99_MS = 25;

/**
 * Authenticated GET /api/v1/users/{id} through the full stack (token auth, rate limit in Redis,
 * validation, envelope) against a bare Koa route doing the same select, on MariaDB + Redis.
 */
export async function apiBenchmark({ quick, log, serve }: BenchOptions): Promise<Record<string, unknown>> {
  const seconds = quick ? 4 : 8;
  const rounds = quick ? 3 : 5;
  const { backend, engine, tenant, env } = await benchBackend([usersProjects]);
  try {
    const user = (
      await request(engine.http().callback())
        .post('/api/v1/users')
        .set(tenant.auth)
        .send({ name: 'Bench User', email: 'bench@example.com' })
    ).body.data;
    await engine.close();

    const barePort = await freePort();
    const full = await serve(env);
    const bare = await startServer(
      [path.join(__dirname, 'bare-server.js')],
      { ...env, PORT: String(barePort), BENCH_ORG_ID: String(tenant.organizationId) },
      `http://127.0.0.1:${barePort}/health`,
    );
    try {
      const fullUrl = `${full.url}/api/v1/users/${user.id}`;
      const bareUrl = `http://127.0.0.1:${barePort}/users/${user.id}`;
      const headers = { Authorization: `Bearer ${tenant.token}` };
      log(`warming up (${CONNECTIONS} connections)`);
      await load(fullUrl, { connections: CONNECTIONS, seconds: 2, headers });
      await load(bareUrl, { connections: CONNECTIONS, seconds: 2 });
      // Alternating rounds, reported by their median, so drift on a shared machine hits both sides alike.
      const bareRounds: LoadFigures[] = [];
      const fullRounds: LoadFigures[] = [];
      for (let round = 1; round <= rounds; round++) {
        log(`round ${round}/${rounds}: bare koa route, then full stack, ${seconds}s each`);
        bareRounds.push(await load(bareUrl, { connections: CONNECTIONS, seconds }));
        fullRounds.push(await load(fullUrl, { connections: CONNECTIONS, seconds, headers }));
      }
      const baseline = median(bareRounds);
      const measured = median(fullRounds);
      const ratio = Number((measured.requests_per_second / baseline.requests_per_second).toFixed(3));
      return {
        name: 'api',
        sizes: { connections: CONNECTIONS, seconds_per_round: seconds, rounds, quick },
        full_stack: measured,
        baseline_bare_koa: baseline,
        ratio_rps: ratio,
        targets: { ratio_rps: TARGET_RATIO, p99_ms: TARGET_P99_MS },
        met: {
          ratio_rps: ratio >= TARGET_RATIO,
          p99_ms: measured.p99_ms < TARGET_P99_MS,
          no_errors: measured.non_2xx === 0 && measured.errors === 0,
        },
      };
    } finally {
      await full.stop();
      await stop(bare);
    }
  } finally {
    await backend.dispose();
  }
}
