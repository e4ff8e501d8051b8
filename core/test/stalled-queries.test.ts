import { expect } from 'chai';
import { createKnex } from '../src/db/knex';
import { watchStalledQueries } from '../src/db/stalled-queries';
import { isDatabaseUnavailable } from '../src/db/errors';
import { blackHolingProxy, productionBackend, TestBackend } from '../src/testing';

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
