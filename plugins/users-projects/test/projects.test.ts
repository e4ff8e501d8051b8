import { expect } from 'chai';
import request from 'supertest';
import type { Server } from 'node:http';
import type { Engine } from '@switchboard/core';
import { describeEachBackend, createTestEngine, createTenant, TestTenant } from '@switchboard/core/testing';
import usersProjects from '../src';
import { UsersService } from '../src/users-service';

describeEachBackend('users-projects: projects', (backend) => {
  let engine: Engine;
  let server: Server;
  let tenant: TestTenant;
  let ownerId: number;

  before(async () => {
    engine = await createTestEngine(backend(), { plugins: [usersProjects], env: { RATE_LIMIT_SCALE: '100' } });
    server = engine.http().listen(0);
    tenant = await createTenant(engine);
    ownerId = (
      await request(server)
        .post('/api/v1/users')
        .set(tenant.auth)
        .send({ name: 'Owner', email: 'owner@example.com' })
        .expect(201)
    ).body.data.id;
  });
  after(async () => {
    server.close();
    await engine.close();
  });

  const create = (body: object, auth = tenant.auth) => request(server).post('/api/v1/projects').set(auth).send(body);

  it('creates a project, active by default, and reads it back', async () => {
    const res = await create({ name: 'Apollo', description: 'to the moon', owner_id: ownerId }).expect(201);
    expect(res.body.data).to.include({
      name: 'Apollo',
      description: 'to the moon',
      owner_id: ownerId,
      status: 'active',
    });
    const read = await request(server).get(`/api/v1/projects/${res.body.data.id}`).set(tenant.auth).expect(200);
    expect(read.body.data).to.deep.equal(res.body.data);
  });

  it('refuses an owner deleted between its check and the insert with the same 422', async () => {
    const check = UsersService.prototype.exists;
    // The owner passed the check, then went: the projects' foreign key refuses the row.
    UsersService.prototype.exists = async () => true;
    try {
      const res = await create({ name: 'Orphan', owner_id: 999999 });
      expect(res.status, JSON.stringify(res.body)).to.equal(422);
      expect(res.body.error.details).to.deep.equal({ field: 'owner_id', rule: 'exists' });
    } finally {
      UsersService.prototype.exists = check;
    }
  });

  it('refuses an owner that is not a user of the organization', async () => {
    const res = await create({ name: 'Nobody', owner_id: 999999 }).expect(422);
    expect(res.body.error.details).to.deep.equal({ field: 'owner_id', rule: 'exists' });
    const other = await createTenant(engine, { name: 'Other' });
    await create({ name: 'Stolen owner', owner_id: ownerId }, other.auth).expect(422);
    const missing = await create({ description: 'no name', owner_id: ownerId }).expect(422);
    expect(missing.body.error.details).to.deep.equal({ field: 'name', rule: 'required' });
    const status = await create({ name: 'Bad', owner_id: ownerId, status: 'deleted' }).expect(422);
    expect(status.body.error.details.field).to.equal('status');
  });

  it('lists with filters and pagination', async () => {
    const org = await createTenant(engine, { name: 'Lists' });
    const owner = (
      await request(server)
        .post('/api/v1/users')
        .set(org.auth)
        .send({ name: 'O', email: 'o@lists.example' })
        .expect(201)
    ).body.data.id;
    for (let i = 0; i < 3; i++) await create({ name: `Live ${i}`, owner_id: owner }, org.auth).expect(201);
    await create({ name: 'Old', owner_id: owner, status: 'archived' }, org.auth).expect(201);
    const all = await request(server).get('/api/v1/projects?per_page=2').set(org.auth).expect(200);
    expect(all.body.data).to.have.length(2);
    expect(all.body.meta).to.include({ page: 1, per_page: 2, total: 4 });
    const archived = await request(server).get('/api/v1/projects?status=archived').set(org.auth).expect(200);
    expect(archived.body.data.map((p: { name: string }) => p.name)).to.deep.equal(['Old']);
  });

  it('keeps a project when its owner is deleted, without an owner', async () => {
    const user = (
      await request(server)
        .post('/api/v1/users')
        .set(tenant.auth)
        .send({ name: 'Leaving', email: 'leaving@example.com' })
        .expect(201)
    ).body.data.id;
    const project = (await create({ name: 'Orphan', owner_id: user }).expect(201)).body.data;
    await request(server).delete(`/api/v1/users/${user}`).set(tenant.auth).expect(200);
    const read = await request(server).get(`/api/v1/projects/${project.id}`).set(tenant.auth).expect(200);
    expect(read.body.data.owner_id).to.equal(null);
  });

  it('hides projects of other organizations', async () => {
    const project = (await create({ name: 'Secret', owner_id: ownerId }).expect(201)).body.data;
    const other = await createTenant(engine, { name: 'Spy' });
    await request(server).get(`/api/v1/projects/${project.id}`).set(other.auth).expect(404);
  });

  it('has no update or delete of projects (the spec lists none): 405', async () => {
    const project = (await create({ name: 'Fixed', owner_id: ownerId }).expect(201)).body.data;
    await request(server).delete(`/api/v1/projects/${project.id}`).set(tenant.auth).expect(405);
  });
});
