import { expect } from 'chai';
import type { Server } from 'node:http';
import type { Engine } from '@switchboard/core';
import { apiClient, createTenant, createTestEngine, embeddedBackend } from '@switchboard/core/testing';
import usersProjects from '@switchboard/plugin-users-projects';

/**
 * A small machine's disk fills up (session 30, a review's finding): a write answers 503 saying so, with
 * Retry-After, instead of a 500, and succeeds once space is back. SQLite's `max_page_count` makes its file
 * full as a full disk does (SQLITE_FULL), on the engine's one connection.
 */
describe('a database whose disk is full [embedded]', () => {
  let engine: Engine;
  let server: Server;
  before(async function () {
    this.timeout(60_000);
    engine = await createTestEngine(embeddedBackend(), { plugins: [usersProjects] });
    server = engine.http().listen(0);
  });
  after(async () => {
    server?.close();
    await engine?.close();
  });

  it('answers writes 503 with Retry-After while it cannot grow, never 500, and takes them once it can', async function () {
    this.timeout(60_000);
    const api = apiClient(server, '/api/v1', await createTenant(engine));
    const [{ page_count: pages }] = (await engine.knex.raw('PRAGMA page_count')) as Array<{ page_count: number }>;
    await engine.knex.raw(`PRAGMA max_page_count = ${pages}`);
    let full: {
      status: number;
      body: { error?: { code: string; message: string } };
      headers: Record<string, string>;
    } | null = null;
    const statuses = new Set<number>();
    for (let i = 0; i < 2_000 && !full; i++) {
      const answer = await api.post('/users', { name: `User ${i} ${'x'.repeat(60)}`, email: `u${i}@full.example` });
      statuses.add(answer.status);
      if (answer.status !== 201) full = answer;
    }
    expect(full, 'the file stopped growing').to.not.equal(null);
    expect(full!.status).to.equal(503);
    expect(full!.body.error).to.deep.include({ code: 'SERVICE_UNAVAILABLE' });
    expect(full!.body.error!.message).to.contain('no space left');
    expect(Number(full!.headers['retry-after'])).to.be.greaterThan(0);
    expect([...statuses].sort()).to.deep.equal([201, 503]);
    await engine.knex.raw('PRAGMA max_page_count = 1073741823');
    await api.post('/users', { name: 'After', email: 'after@full.example' }).expect(201);
  });
});
