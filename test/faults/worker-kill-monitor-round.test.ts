import fs from 'node:fs';
import type { Server } from 'node:http';
import path from 'node:path';
import { expect } from 'chai';
import request from 'supertest';
import { createTenant, waitFor } from '@switchboard/core/testing';
import usersProjects from '@switchboard/plugin-users-projects';
import monitor from '@switchboard/plugin-server-monitor';
import { runJson } from '../src/cli';
import { PrivateStack } from './support/private-stack';
import { CheckFarm } from './support/check-farm';
import { CliProcess } from './support/cli-process';

const SERVERS = 600;
const KEY = 'faults-monitor-key-0123456789';
/** Each monitored server answers after this: a round of 600 at 200 at once takes about 3 s. */
const ANSWER_MS = 1_000;
/**
 * What a killed worker may have checked twice: the check jobs it was running, at most its places
 * (`checks.concurrency`, 200 by default, docs/operations.md; the premium jobs it holds beyond them wait
 * unchecked). Each such job is taken again once its lease stalls; if its result was written before the
 * kill, it is written twice.
 */
const IN_FLIGHT = 200;
/** A premium tier's round is dispatched again only half a cadence (60 s) after the last. */
const HALF_CADENCE_MS = 30_000;
/** bee-queue's stall interval (5 s), twice over, plus the round itself: a killed worker's jobs run again by then. */
const RECOVERY_BOUND_MS = 30_000;

/**
 * Issue 26: a `switchboard worker` SIGKILLed while a round of checks of 600 servers is under way (on a farm
 * of monitored servers on loopback that counts the requests each receives). A new worker finishes the
 * round: every server checked, none more than twice, at most the jobs in flight at the kill twice (farm
 * requests and stored check results, per server). The next round checks every server once again (no job
 * of the dead worker left to block its server's next check). Private MariaDB and Redis; rounds dispatched
 * through the key route of the API in this process, whose clock is moved past half a cadence for round 2.
 */
describe('faults: worker killed mid monitor round [private mariadb+redis]', function () {
  let stack: PrivateStack;
  let farm: CheckFarm;
  let server: Server;
  let ahead = 0;
  let worker: CliProcess;
  /** Server id by the farm's number in its endpoint. */
  const serverOf = new Map<number, number>();

  before(async function () {
    this.timeout(180_000);
    farm = await CheckFarm.start(ANSWER_MS);
    stack = await PrivateStack.start({
      plugins: [usersProjects, monitor],
      env: { SERVER_MONITOR_API_KEY: KEY, RATE_LIMIT_SCALE: '1000' },
      clock: { now: () => new Date(Date.now() + ahead) },
    });
    server = stack.engine.http().listen(0);
    const org = (await createTenant(stack.engine, { plan: 'pro' })).organizationId;
    const file = path.join(stack.backend.dataDir, 'servers.csv');
    const rows = Array.from({ length: SERVERS }, (_, i) => `Server ${i + 1},${farm.endpoint(i + 1)},Faults`);
    fs.writeFileSync(file, ['title,endpoint,organization_name', ...rows].join('\n'));
    expect(await runJson(['servermonitor:import', file, '--organization', String(org)], stack.env())).to.include({
      imported: SERVERS,
    });
    for (const r of await stack.engine.knex('monitor_servers').select('id', 'endpoint'))
      serverOf.set(Number(/\/server\/(\d+)$/.exec(r.endpoint)![1]), Number(r.id));
    worker = stack.process(['worker']);
  });
  after(async () => {
    server?.close();
    await stack?.dispose();
    await farm?.close();
  });

  const dispatch = async () =>
    (await request(server).get(`/api/servermonitor/check/premium/${KEY}`).expect(200)).body.output as string;
  /** Stored check results per server, of those checked at or after `from` (epoch ms) and before `to`. */
  const resultsPerServer = async (from: number, to = Infinity) => {
    const rows: Array<{ server_id: unknown; n: unknown }> = await stack.engine
      .knex('monitor_check_results')
      .where('checked_at', '>=', new Date(from))
      .andWhere('checked_at', '<', new Date(Math.min(to, Date.now() + 3_600_000)))
      .groupBy('server_id')
      .select('server_id', stack.engine.knex.raw('count(*) as n'));
    return new Map(rows.map((r) => [Number(r.server_id), Number(r.n)]));
  };
  /** Farm requests per server id, between `from` and `to`. */
  const hitsPerServer = (from: number, to = Infinity) =>
    new Map([...serverOf].map(([n, id]) => [id, (farm.hits.get(n) ?? []).filter((t) => t >= from && t < to).length]));
  /** Nothing reached the farm for a while: the round is over, the queue empty. */
  const quiet = () => waitFor(() => Date.now() - farm.lastHit() > 3 * ANSWER_MS, 60_000, 200);
  const tally = (perServer: Map<number, number>) => {
    const counts = [...serverOf.values()].map((id) => perServer.get(id) ?? 0);
    return {
      total: counts.reduce((a, b) => a + b, 0),
      unchecked: counts.filter((n) => n === 0).length,
      twice: counts.filter((n) => n === 2).length,
      more: counts.filter((n) => n > 2).length,
      duplicated: counts.reduce((a, n) => a + Math.max(0, n - 1), 0),
    };
  };

  it('finishes the round after a restart: every server checked, at most the jobs in flight twice', async () => {
    await worker.start();
    const roundStart = Date.now() - 1;
    const output1 = await dispatch();
    expect(output1).to.contain(`Dispatched ${SERVERS} server checks`);
    await waitFor(() => farm.count() >= SERVERS / 2, 60_000, 10);
    await worker.kill();
    const killedAt = Date.now();
    const hitsAtKill = farm.count();
    const storedAtKill = tally(await resultsPerServer(roundStart)).total;
    expect(hitsAtKill, 'the round was under way').to.be.below(SERVERS);

    await worker.start();
    await waitFor(async () => tally(await resultsPerServer(roundStart)).unchecked === 0, 3 * RECOVERY_BOUND_MS, 200);
    const recoveredMs = Date.now() - killedAt;
    await quiet();
    const round1End = Date.now();
    const stored1 = tally(await resultsPerServer(roundStart, round1End));
    const hits1 = tally(hitsPerServer(roundStart, round1End));

    // The next round, half a cadence later by the dispatching clock: every server once more.
    ahead = HALF_CADENCE_MS + 1_000;
    const output2 = await dispatch();
    await waitFor(async () => tally(await resultsPerServer(round1End)).unchecked === 0, 3 * RECOVERY_BOUND_MS, 200);
    await quiet();
    const stored2 = tally(await resultsPerServer(round1End));
    const hits2 = tally(hitsPerServer(round1End));

    console.log(
      `      figures ${JSON.stringify({
        servers: SERVERS,
        at_kill: { farm_requests: hitsAtKill, results_stored: storedAtKill },
        all_checked_after_kill_ms: recoveredMs,
        round1: { farm: hits1, stored: stored1 },
        round2: { dispatch: output2, farm: hits2, stored: stored2 },
        lost: stored1.unchecked + stored2.unchecked,
        duplicated_results: stored1.duplicated,
        duplicated_requests: hits1.duplicated,
        in_flight_bound: IN_FLIGHT,
      })}`,
    );

    expect(recoveredMs).to.be.below(RECOVERY_BOUND_MS);
    for (const round of [stored1, hits1, stored2, hits2]) {
      expect(round.unchecked).to.equal(0);
      expect(round.more).to.equal(0);
    }
    expect(stored1.duplicated).to.be.at.most(IN_FLIGHT);
    expect(hits1.duplicated).to.be.at.most(IN_FLIGHT);
    expect(output2).to.contain(`Dispatched ${SERVERS} server checks`);
    expect(stored2.duplicated).to.equal(0);
    expect(hits2.duplicated).to.equal(0);
  }).timeout(240_000);
});
