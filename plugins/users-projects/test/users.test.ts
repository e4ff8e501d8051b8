import { expect } from 'chai';
import request from 'supertest';
import type { Server } from 'node:http';
import type { Engine } from '@switchboard/core';
import { describeEachBackend, createTestEngine, createTenant, TestTenant } from '@switchboard/core/testing';
import usersProjects from '../src';

describeEachBackend('users-projects: users', (backend) => {
  let engine: Engine;
  let server: Server;
  let tenant: TestTenant;

  before(async () => {
    engine = await createTestEngine(backend(), { plugins: [usersProjects], env: { RATE_LIMIT_SCALE: '100' } });
    server = engine.http().listen(0);
    tenant = await createTenant(engine);
  });
  after(async () => {
    server.close();
    await engine.close();
  });

  const create = (body: object, auth = tenant.auth) => request(server).post('/api/v1/users').set(auth).send(body);

  it('creates a user with defaults and reads it back', async () => {
    const created = await create({ name: 'Ada Lovelace', email: 'Ada@Example.COM' }).expect(201);
    expect(created.body.success).to.equal(true);
    const user = created.body.data;
    expect(user).to.include({ name: 'Ada Lovelace', email: 'ada@example.com', role: 'member', phone: null });
    expect(user.created_at).to.equal(user.updated_at);
    const read = await request(server).get(`/api/v1/users/${user.id}`).set(tenant.auth).expect(200);
    expect(read.body.data).to.deep.equal(user);
    expect(read.body.meta).to.have.keys('timestamp', 'version');
  });

  it('answers VALIDATION_ERROR with details.field for a missing or invalid field', async () => {
    const missing = await create({ name: 'No Mail' }).expect(422);
    expect(missing.body.error).to.deep.include({
      code: 'VALIDATION_ERROR',
      details: { field: 'email', rule: 'required' },
    });
    const role = await create({ name: 'X', email: 'x@example.com', role: 'owner' }).expect(422);
    expect(role.body.error.details.field).to.equal('role');
    const email = await create({ name: 'X', email: 'not-an-email' }).expect(422);
    expect(email.body.error.details).to.deep.equal({ field: 'email', rule: 'format' });
    const name = await create({ name: '', email: 'x@example.com' }).expect(422);
    expect(name.body.error.details).to.deep.equal({ field: 'name', rule: 'minLength' });
    // Blank names and phones without a digit were taken (session 34).
    const blank = await create({ name: '   ', email: 'x@example.com' }).expect(422);
    expect(blank.body.error.details).to.deep.equal({ field: 'name', rule: 'pattern' });
    for (const phone of ['   ', '---', '+()'])
      expect(
        (await create({ name: 'X', email: 'x@example.com', phone }).expect(422)).body.error.details,
        phone,
      ).to.deep.equal({
        field: 'phone',
        rule: 'pattern',
      });
    await create({ name: 'Phoned', email: 'phoned@example.com', phone: '+1 (555) 010-9999' }).expect(201);
    // A lone surrogate is no character: refused rather than stored as U+FFFD.
    const sent = (json: string) =>
      request(server).post('/api/v1/users').set(tenant.auth).set('Content-Type', 'application/json').send(json);
    const lone = await sent('{"name": "a\\ud800b", "email": "lone@example.com"}').expect(400);
    expect(lone.body.error.code).to.equal('BAD_REQUEST');
    const paired = await sent('{"name": "Smile \\ud83d\\ude00", "email": "smile@example.com"}').expect(201);
    expect(paired.body.data.name).to.equal('Smile \u{1F600}');
  });

  it('refuses a second user with the same email in the organization, whatever its case', async () => {
    await create({ name: 'First', email: 'dup@example.com' }).expect(201);
    const res = await create({ name: 'Second', email: 'DUP@example.com' }).expect(409);
    expect(res.body.error).to.deep.include({ code: 'DUPLICATE_ENTRY', details: { field: 'email', rule: 'unique' } });
    const other = await createTenant(engine, { name: 'Other' });
    await create({ name: 'Elsewhere', email: 'dup@example.com' }, other.auth).expect(201);
  });

  it('trims the email it is given and stores it lower-cased, on create and on update (docs/decisions.md)', async () => {
    const user = (await create({ name: 'Bob', email: ' Bob@Trim.example ' }).expect(201)).body.data;
    expect(user.email).to.equal('bob@trim.example');
    const res = await request(server)
      .put(`/api/v1/users/${user.id}`)
      .set(tenant.auth)
      .send({ email: '\tCy@Trim.example ' })
      .expect(200);
    expect(res.body.data.email).to.equal('cy@trim.example');
    await create({ name: 'Again', email: ' CY@trim.example' }).expect(409);
  });

  it('updates any subset of fields, keeping email unique', async () => {
    const user = (await create({ name: 'Grace', email: 'grace@example.com' }).expect(201)).body.data;
    const res = await request(server)
      .put(`/api/v1/users/${user.id}`)
      .set(tenant.auth)
      .send({ role: 'admin', phone: '+1 555 0100' })
      .expect(200);
    expect(res.body.data).to.include({ name: 'Grace', role: 'admin', phone: '+1 555 0100' });
    await create({ name: 'Taken', email: 'taken@example.com' }).expect(201);
    const dup = await request(server)
      .put(`/api/v1/users/${user.id}`)
      .set(tenant.auth)
      .send({ email: 'taken@example.com' })
      .expect(409);
    expect(dup.body.error.code).to.equal('DUPLICATE_ENTRY');
    const empty = await request(server).put(`/api/v1/users/${user.id}`).set(tenant.auth).send({}).expect(422);
    expect(empty.body.error.details.rule).to.equal('minProperties');
  });

  it('deletes a user, then answers 404 for it', async () => {
    const user = (await create({ name: 'Gone', email: 'gone@example.com' }).expect(201)).body.data;
    const res = await request(server).delete(`/api/v1/users/${user.id}`).set(tenant.auth).expect(200);
    expect(res.body.data).to.deep.equal({ id: user.id, deleted: true });
    const again = await request(server).get(`/api/v1/users/${user.id}`).set(tenant.auth).expect(404);
    expect(again.body.error.code).to.equal('RESOURCE_NOT_FOUND');
    await request(server).delete(`/api/v1/users/${user.id}`).set(tenant.auth).expect(404);
  });

  it('paginates with page and per_page (default 20, max 100) and reports the total', async () => {
    const org = await createTenant(engine, { name: 'Paged' });
    for (let i = 1; i <= 25; i++)
      await create({ name: `User ${i}`, email: `u${i}@paged.example` }, org.auth).expect(201);
    const first = await request(server).get('/api/v1/users').set(org.auth).expect(200);
    expect(first.body.data).to.have.length(20);
    expect(first.body.meta).to.include({ page: 1, per_page: 20, total: 25 });
    const second = await request(server).get('/api/v1/users?page=2&per_page=10').set(org.auth).expect(200);
    expect(second.body.data.map((u: { name: string }) => u.name)).to.deep.equal(
      Array.from({ length: 10 }, (_, i) => `User ${i + 11}`),
    );
    const tooMany = await request(server).get('/api/v1/users?per_page=101').set(org.auth).expect(422);
    expect(tooMany.body.error.details).to.deep.equal({ field: 'per_page', rule: 'maximum' });
    const search = await request(server).get('/api/v1/users?search=user 2').set(org.auth).expect(200);
    expect(search.body.meta.total).to.equal(7);
  });

  it('finds names past ASCII whatever their case or accents: Éloïse by éloïse, ÜNAL, Élo or eloise', async () => {
    const org = await createTenant(engine, { name: 'Accents' });
    await create({ name: 'Éloïse Ünal', email: 'Elo@Example.com' }, org.auth).expect(201);
    await create({ name: 'zq\u0000xylo', email: 'nul@example.com' }, org.auth).expect(201);
    const total = async (text: string) =>
      (
        await request(server)
          .get(`/api/v1/users?search=${encodeURIComponent(text)}`)
          .set(org.auth)
          .expect(200)
      ).body.meta.total;
    // Accents folded on both backends (MariaDB's collation folded them, SQLite did not: session 34).
    for (const text of ['Éloïse', 'éloïse', 'ÜNAL', 'Élo', 'elo@example', 'eloise', 'unal'])
      expect(await total(text), text).to.equal(1);
    // ß as typed, on both backends (folded to ss on one side only, MariaDB no longer found it).
    await create({ name: 'Anna Straße', email: 'strasse@example.com' }, org.auth).expect(201);
    for (const text of ['Straße', 'STRAßE']) expect(await total(text), text).to.equal(1);
    // A NUL is text like any other (SQLite's LIKE stopped at it: "\0nomatch" matched everyone, "xylo" no one).
    expect(await total('\u0000nomatch')).to.equal(0);
    expect(await total('xylo')).to.equal(1);
    expect(await total('q\u0000x')).to.equal(1);
  });

  it('never shows another organization its users: their ids answer 404', async () => {
    const user = (await create({ name: 'Private', email: 'private@example.com' }).expect(201)).body.data;
    const other = await createTenant(engine, { name: 'Intruder' });
    await request(server).get(`/api/v1/users/${user.id}`).set(other.auth).expect(404);
    await request(server).put(`/api/v1/users/${user.id}`).set(other.auth).send({ name: 'Hacked' }).expect(404);
    await request(server).delete(`/api/v1/users/${user.id}`).set(other.auth).expect(404);
    const list = await request(server).get('/api/v1/users').set(other.auth).expect(200);
    expect(list.body.meta.total).to.equal(0);
    const still = await request(server).get(`/api/v1/users/${user.id}`).set(tenant.auth).expect(200);
    expect(still.body.data.name).to.equal('Private');
  });

  it('needs users:read to list and users:write to change', async () => {
    const reader = await createTenant(engine, { permissions: ['users:read'] });
    await request(server).get('/api/v1/users').set(reader.auth).expect(200);
    const res = await create({ name: 'X', email: 'x@reader.example' }, reader.auth).expect(403);
    expect(res.body.error.code).to.equal('AUTH_INSUFFICIENT_PERMISSIONS');
    const projectsOnly = await createTenant(engine, { permissions: ['projects:read'] });
    await request(server).get('/api/v1/users').set(projectsOnly.auth).expect(403);
  });
});
