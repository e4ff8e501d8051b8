import { expect } from 'chai';
import request from 'supertest';
import { apiClient, ApiClient, createTenant, describeEachBackend, TestTenant } from '@switchboard/core/testing';
import { CheckWorker } from '../../checks';
import { monitorFixture, MonitorFixture, rowCount } from '../../shared/tests/support';
import { Farm, httpFarm } from '../../shared/tests/farm';

describeEachBackend('server-monitor: servers over REST', (backend) => {
  let f: MonitorFixture;
  let farm: Farm;
  let acme: TestTenant;
  let api: ApiClient;
  before(async () => {
    farm = await httpFarm();
    f = await monitorFixture(backend());
    acme = await createTenant(f.engine, { name: 'Acme', plan: 'pro' });
    api = apiClient(f.server, '/api/servermonitor', acme);
  });
  after(async () => {
    await f?.close();
    await farm?.close();
  });

  const check = (id: number) => f.engine.contexts.get('server-monitor')!.container.resolve(CheckWorker).run(id);
  const add = async (title: string, endpoint: string, extra: object = {}) =>
    (await api.post('/servers', { title, endpoint, ...extra }).expect(201)).body.data;

  it('adds servers, shows their state after a check, lists them by state and search, pages their checks', async () => {
    const web = await add('Web', `${farm.url}/status/200`, { notes: 'the shop' });
    expect(web).to.include({ title: 'Web', state: 'pending', status: null, plan: 'pro', notes: 'the shop' });
    expect(web).to.include({ last_checked_at: null, down_since: null, last_error: null, ssl: null });
    expect(web.heartbeats).to.deep.equal([]);
    const dead = await add('Dead port', `${farm.url}/status/503`);

    // The same endpoint twice, another scheme: refused with the field named.
    const twice = await api.post('/servers', { title: 'Again', endpoint: `${farm.url}/status/200` }).expect(409);
    expect(twice.body.error.code).to.equal('DUPLICATE_ENTRY');
    // Shown alike (`?sortKey=***`, `?token=***`) is not the same: other values request other URLs.
    for (const query of ['sortKey=name', 'sortKey=date', 'token=a1', 'token=b2'])
      await api.post('/servers', { title: query, endpoint: `${farm.url}/status/200?${query}` }).expect(201);
    await api.post('/servers', { title: 'Again', endpoint: `${farm.url}/status/200?token=b2` }).expect(409);
    const ftp = await api.post('/servers', { title: 'Files', endpoint: 'ftp://files.example' }).expect(422);
    expect(ftp.body.error.details).to.deep.equal({ field: 'endpoint', rule: 'pattern' });
    // A cloud metadata address is no server (docs/decisions.md, Internal networks).
    const metadata = await api
      .post('/servers', { title: 'Meta', endpoint: 'http://169.254.169.254/latest' })
      .expect(422);
    expect(metadata.body.error.details).to.deep.equal({ field: 'endpoint', rule: 'monitorable' });
    // A password in the URL is sealed at rest and never shown.
    const locked = await add('Locked', `${farm.url.replace('//', '//ops:s3cret@')}/status/200`);
    expect(locked.endpoint).to.equal(`${farm.url.replace('//', '//ops:***@')}/status/200`);
    const row = await f.engine.knex('monitor_servers').where({ id: locked.id }).first();
    expect(JSON.stringify(row)).to.not.contain('s3cret');
    // Written back whole as read (a client's edit of the title): the mask keeps the password, and the
    // server its state; another password is sealed anew.
    expect(await check(locked.id)).to.include({ up: true });
    const renamed = await api.put(`/servers/${locked.id}`, { title: 'Locked, renamed', endpoint: locked.endpoint });
    expect(renamed.status).to.equal(200);
    expect(renamed.body.data).to.include({ title: 'Locked, renamed', state: 'up', endpoint: locked.endpoint });
    const kept = await f.engine.knex('monitor_servers').where({ id: locked.id }).first('endpoint_secret');
    expect(kept.endpoint_secret).to.equal(row.endpoint_secret);
    // The mask in another URL (another host, another path) is refused: the password is not sent elsewhere.
    const elsewhere = await api
      .put(`/servers/${locked.id}`, { endpoint: 'https://ops:***@elsewhere.example/status/200' })
      .expect(422);
    expect(elsewhere.body.error.details).to.deep.equal({ field: 'endpoint', rule: 'password' });
    const moved = `${farm.url.replace('//', '//ops:***@')}/status/204`;
    await api.put(`/servers/${locked.id}`, { endpoint: moved }).expect(422);
    const other = `${farm.url.replace('//', '//ops:0ther@')}/status/200`;
    await api.put(`/servers/${locked.id}`, { endpoint: other }).expect(200);
    const resealed = await f.engine.knex('monitor_servers').where({ id: locked.id }).first('endpoint_secret', 'state');
    expect(resealed.endpoint_secret).to.not.equal(row.endpoint_secret);
    expect(resealed.state).to.equal('pending');
    // Sealed under another APP_KEY (a restored backup, say): the password given again replaces it.
    await f.engine.knex('monitor_servers').where({ id: locked.id }).update({ endpoint_secret: 'v1.sealed-elsewhere' });
    const endpoint = `${farm.url.replace('//', '//ops:n3w@')}/status/200`;
    await api.put(`/servers/${locked.id}`, { endpoint }).expect(200);
    expect(await check(locked.id)).to.include({ up: true });
    await api.delete(`/servers/${locked.id}`).expect(200);

    await check(web.id);
    await check(dead.id);
    const up = (await api.get(`/servers/${web.id}`).expect(200)).body.data;
    expect(up).to.include({ state: 'up', status: '200', last_error: null });
    expect(up.last_checked_at).to.be.a('string');
    expect(up.response_ms).to.be.a('number');
    const down = (await api.get(`/servers/${dead.id}`).expect(200)).body.data;
    expect(down).to.include({ state: 'down', status: '503', last_error: 'answered 503' });
    expect(down.down_since).to.be.a('string');
    // Newest first: the DOWN nobody could hear (Acme has no administrator), then the change of status.
    expect(down.recent_log.map((e: { updated_status: string }) => e.updated_status)).to.deep.equal(['unheard', '503']);

    const listed = (await api.get('/servers?state=down').expect(200)).body;
    expect(listed.data.map((s: { id: number }) => s.id)).to.deep.equal([dead.id]);
    expect(listed.pagination).to.include({ total: 1, current_page: 1, last_page: 1 });
    const found = (await api.get('/servers?search=WEB').expect(200)).body.data;
    expect(found.map((s: { id: number }) => s.id)).to.deep.equal([web.id]);
    expect((await api.get('/servers?search=%25').expect(200)).body.data).to.deep.equal([]);
    expect((await api.get('/servers?per_page=1&page=2').expect(200)).body.data[0].id).to.equal(dead.id);
    await api.get('/servers?state=sleeping').expect(422);

    await check(dead.id);
    const checks = (await api.get(`/servers/${dead.id}/checks?per_page=1`).expect(200)).body;
    expect(checks.pagination).to.include({ total: 2, last_page: 2 });
    expect(checks.data[0]).to.include({ up: false, status: '503', error: 'answered 503' });
  });

  it('pauses a server (no check runs, no alert) and resumes it as last checked; a new endpoint starts over', async () => {
    const api2 = await add('Paused', `${farm.url}/status/500`, { paused: true });
    expect(api2).to.include({ state: 'paused' });
    expect(api2.paused_at).to.be.a('string');
    expect(await check(api2.id)).to.equal(null);
    expect(await rowCount(f.engine.knex, 'monitor_check_results', { server_id: api2.id })).to.equal(0);
    // Listed as paused, not down.
    const paused = (await api.get('/servers?state=paused').expect(200)).body.data;
    expect(paused.map((s: { id: number }) => s.id)).to.include(api2.id);

    const resumed = (await api.put(`/servers/${api2.id}`, { paused: false }).expect(200)).body.data;
    expect(resumed, 'never checked').to.include({ state: 'pending', paused_at: null });
    await check(api2.id);
    const down = (await api.get(`/servers/${api2.id}`).expect(200)).body.data;
    expect(down.state).to.equal('down');

    // Paused while down: no outage start shown meanwhile; resumed, down again at once with its outage's start.
    const pausedDown = (await api.put(`/servers/${api2.id}`, { paused: true }).expect(200)).body.data;
    expect(pausedDown).to.include({ state: 'paused', down_since: null });
    expect(
      (await api.get('/servers?state=down').expect(200)).body.data.map((s: { id: number }) => s.id),
    ).to.not.include(api2.id);
    const resumedDown = (await api.put(`/servers/${api2.id}`, { paused: false }).expect(200)).body.data;
    expect(resumedDown).to.include({ state: 'down', down_since: down.down_since, paused_at: null });
    expect((await api.get('/servers?state=down').expect(200)).body.data.map((s: { id: number }) => s.id)).to.include(
      api2.id,
    );

    const moved = (
      await api.put(`/servers/${api2.id}`, { endpoint: `${farm.url}/status/204`, title: 'Moved' }).expect(200)
    ).body.data;
    expect(moved).to.include({ title: 'Moved', state: 'pending', status: null, down_since: null });
    await api.put(`/servers/${api2.id}`, {}).expect(422);
  });

  it("keeps organizations apart: another's server ids answer 404 and change nothing; permissions hold", async () => {
    const mine = await add('Mine', `${farm.url}/status/201`);
    const other = await createTenant(f.engine, { name: 'Other' });
    const theirs = apiClient(f.server, '/api/servermonitor', other);
    expect((await theirs.get('/servers').expect(200)).body.data).to.deep.equal([]);
    for (const request of [
      theirs.get(`/servers/${mine.id}`),
      theirs.get(`/servers/${mine.id}/checks`),
      theirs.put(`/servers/${mine.id}`, { title: 'Taken' }),
      theirs.delete(`/servers/${mine.id}`),
    ])
      expect((await request.expect(404)).body.error.code).to.equal('RESOURCE_NOT_FOUND');
    expect((await api.get(`/servers/${mine.id}`).expect(200)).body.data.title).to.equal('Mine');

    const reader = apiClient(
      f.server,
      '/api/servermonitor',
      await createTenant(f.engine, { name: 'Reader', permissions: ['servers:read'] }),
    );
    await reader.get('/servers').expect(200);
    await reader.post('/servers', { title: 'No', endpoint: `${farm.url}/status/200` }).expect(403);
    await request(f.server).get('/api/servermonitor/servers').expect(401);

    // Its alerts being tried, or kept for no one, go with it (a DOWN told later would have no UP); one sent stays.
    const alert = (state: string) => ({
      server_id: mine.id,
      kind: 'server-down',
      channel: state === 'unheard' ? 'none' : 'email',
      recipient: state === 'unheard' ? '' : 'ops@acme.test',
      subject: `DOWN: Mine (${state})`,
      body: '',
      state,
      created_at: new Date(),
    });
    const [organizationId] = await f.engine.knex('monitor_servers').where({ id: mine.id }).pluck('organization_id');
    await f.engine
      .knex('monitor_alerts')
      .insert(['sent', 'pending', 'unheard'].map((state) => ({ organization_id: organizationId, ...alert(state) })));
    expect((await api.delete(`/servers/${mine.id}`).expect(200)).body.message).to.equal(`Server ${mine.id} deleted`);
    await api.get(`/servers/${mine.id}`).expect(404);
    expect(
      await f.engine.knex('monitor_alerts').where({ server_id: mine.id }).orderBy('id').pluck('state'),
    ).to.deep.equal(['sent', 'lapsed', 'lapsed']);
  });
});
