import net from 'node:net';
import { expect } from 'chai';
import { createKnex } from '../src/db/knex';
import { watchStalledQueries } from '../src/db/stalled-queries';
import { isDatabaseUnavailable } from '../src/db/errors';
import { productionBackend, TestBackend } from '../src/testing';

/**
 * A TCP proxy to MariaDB that can black-hole the connections it carries (bytes taken, nothing passed on,
 * no reset: a NAT that lost their state), while new connections pass.
 */
async function blackHolingProxy(target: { host: string; port: number }) {
  const open: Array<{ client: net.Socket; upstream: net.Socket }> = [];
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    client.pipe(upstream);
    upstream.pipe(client);
    const end = () => (client.destroy(), upstream.destroy());
    client.on('error', end);
    upstream.on('error', end);
    open.push({ client, upstream });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    blackHole() {
      for (const { client, upstream } of open.splice(0)) {
        client.unpipe(upstream);
        upstream.unpipe(client);
        client.resume();
        upstream.resume();
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('a MariaDB connection that stalls [mysql]', () => {
  let backend: TestBackend | null = null;
  before(async function () {
    backend = await productionBackend();
    if (!backend) this.skip();
  });
  after(async () => backend?.dispose());

  it('fails the statement in flight once watched, as the database away, and the pool goes on with new connections', async () => {
    const url = new URL(backend!.databaseUrl);
    const proxy = await blackHolingProxy({ host: url.hostname, port: Number(url.port || 3306) });
    url.host = `127.0.0.1:${proxy.port}`;
    const knex = createKnex(url.toString(), { pool: { min: 0, max: 1 }, stalledQueryMs: 1_000 });
    try {
      watchStalledQueries(knex);
      expect((await knex.raw('select 1 as one'))[0][0].one).to.equal(1);
      proxy.blackHole();
      const started = Date.now();
      const err = await knex.raw('select 2 as two').then(
        () => null,
        (e: Error) => e,
      );
      expect(err?.message).to.contain('the database did not answer within 1 s');
      expect(isDatabaseUnavailable(err)).to.equal(true);
      expect(Date.now() - started).to.be.below(10_000);
      // The stalled connection is gone: the next statement gets a new one, which the proxy passes.
      expect((await knex.raw('select 3 as three'))[0][0].three).to.equal(3);
    } finally {
      await knex.destroy();
      await proxy.close();
    }
  }).timeout(60_000);

  it('leaves a statement alone while the knex is not watched (migrations, one-off commands)', async () => {
    const knex = createKnex(backend!.databaseUrl, { stalledQueryMs: 300 });
    try {
      expect((await knex.raw('select sleep(1) as slept'))[0][0].slept).to.equal(0);
    } finally {
      await knex.destroy();
    }
  }).timeout(30_000);
});
