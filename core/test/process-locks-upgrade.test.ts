import { expect } from 'chai';
import type { Knex } from 'knex';
import { createKnex } from '../src/db/knex';
import { Migrator } from '../src/db/migrations';
import { CORE_MIGRATIONS } from '../src/engine/engine';
import { DatabaseLocks } from '../src/locks/database-locks';
import { describeEachBackend } from '../src/testing/services';

/**
 * Core 1.2 (session 28): a 1.1 database holding an organization and its token upgrades to the scheduler's
 * lock table, keeps its rows, and rolls back to 1.1 without it.
 */
describeEachBackend('core: upgrading a 1.1 database to 1.2 (process locks)', (backend) => {
  let knex: Knex;
  before(() => {
    knex = createKnex(backend().databaseUrl);
  });
  after(async () => {
    await knex?.destroy();
  });

  it('adds process_locks beside the 1.1 rows, and rollback --to 1.1 takes it away', async () => {
    const migrator = new Migrator(knex, [CORE_MIGRATIONS]);
    await migrator.latest({ to: '1.1' });
    const now = new Date();
    await knex('organizations').insert({ id: 7, name: 'Older', created_at: now, updated_at: now });
    const before = await knex('organizations').select('id', 'name');
    expect(await knex.schema.hasTable('process_locks')).to.equal(false);

    expect(await migrator.latest()).to.deep.equal([{ plugin: 'core', applied: ['1.2/01-create-process-locks'] }]);
    expect(await knex('organizations').select('id', 'name')).to.deep.equal(before);
    const lock = await new DatabaseLocks(knex).acquire('scheduler:leader', 30_000);
    expect(lock).not.to.equal(null);
    await lock!.release();

    expect(await migrator.rollback({ to: '1.1' })).to.deep.equal([
      { plugin: 'core', reverted: ['1.2/01-create-process-locks'] },
    ]);
    expect(await knex.schema.hasTable('process_locks')).to.equal(false);
    expect(await knex('organizations').select('id', 'name')).to.deep.equal(before);
  });
});
