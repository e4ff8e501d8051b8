import { expect } from 'chai';
import { defineService, definePlugin, Engine } from '@switchboard/core';
import { createTenant, createTestEngine, describeEachBackend } from '@switchboard/core/testing';
import usersProjects, { UsersDirectory } from '../src';

describeEachBackend('users-projects: the users directory other plugins inject', (backend) => {
  /** A plugin of another package: it names the service and imports only its interface. */
  const DIRECTORY = defineService<UsersDirectory>('users.directory');
  const reader = definePlugin({ id: 'reader', version: '1.0', needs: [DIRECTORY] });
  let engine: Engine;
  before(async () => {
    engine = await createTestEngine(backend(), { plugins: [reader, usersProjects] });
  });
  after(async () => {
    await engine?.close();
  });

  const directory = () => engine.contexts.get('reader')!.container.resolve<UsersDirectory>(DIRECTORY.key);
  const addUser = async (organizationId: number, email: string, role: string, phone: string | null = null) => {
    const now = new Date();
    const [id] = await engine
      .knex('users')
      .insert({ organization_id: organizationId, name: email, email, role, phone, created_at: now, updated_at: now });
    return Number(id);
  };

  it("gives an organization's administrators and its users by id, never another organization's", async () => {
    const { organizationId: org } = await createTenant(engine);
    const { organizationId: other } = await createTenant(engine);
    const ada = await addUser(org, 'ada@dir.test', 'admin', '+15550301');
    const bob = await addUser(org, 'bob@dir.test', 'member');
    const eve = await addUser(other, 'eve@dir.test', 'admin');
    const cyd = await addUser(org, 'cyd@dir.test', 'admin');

    expect(await directory().administrators(org)).to.deep.equal([
      { id: ada, organization_id: org, email: 'ada@dir.test', phone: '+15550301', role: 'admin' },
      { id: cyd, organization_id: org, email: 'cyd@dir.test', phone: null, role: 'admin' },
    ]);
    expect((await directory().usersOf(org, [bob, eve, ada, bob, 123456])).map((u) => [u.id, u.role])).to.deep.equal([
      [ada, 'admin'],
      [bob, 'member'],
    ]);
    expect(await directory().usersOf(org, [])).to.deep.equal([]);
  });

  it("reads in the caller's transaction when given one", async () => {
    const { organizationId: org } = await createTenant(engine);
    const seen = await engine.knex.transaction(async (trx) => {
      const now = new Date();
      await trx('users').insert({
        organization_id: org,
        name: 'Dan',
        email: 'dan@dir.test',
        role: 'admin',
        created_at: now,
        updated_at: now,
      });
      // On SQLite, a read on another connection would wait for this transaction to end.
      return directory().administrators(org, trx);
    });
    expect(seen.map((u) => u.email)).to.deep.equal(['dan@dir.test']);
  });
});
