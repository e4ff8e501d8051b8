import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { ConfigError } from '@switchboard/core';
import { describeEachBackend, smtpSink, SmtpSink, waitFor } from '@switchboard/core/testing';
import { CheckWorker } from '../check-worker';
import { HttpChecker } from '../http-check';
import { MONITOR_ADDRESSES, MonitorAddresses } from '../../shared/addresses';
import { SslService } from '../../ssl';
import { addServer, monitorFixture, MonitorFixture, organization } from '../../shared/tests/support';
import { Farm, httpFarm } from '../../shared/tests/farm';
import { loopbackNetwork, LoopbackNetwork } from '../../shared/tests/loopback-network';

// Traffic stays on loopback: names resolve through a stub, and what the guard lets through to a
// non-loopback address is recorded and connected to on 127.0.0.1 (loopbackNetwork).
describeEachBackend('server-monitor: checks and internal networks', (backend) => {
  let f: MonitorFixture;
  let farm: Farm;
  let target: Farm;
  let sink: SmtpSink;
  let network: LoopbackNetwork | undefined;
  before(async () => {
    farm = await httpFarm();
    target = await httpFarm();
    sink = await smtpSink();
    f = await monitorFixture(backend(), { env: { SMTP_URL: sink.url } });
    // Alerts go out through the queue; no check is dispatched here, each test runs its own.
    f.engine.startWorkers();
  });
  afterEach(() => {
    network?.restore();
    network = undefined;
  });
  after(async () => {
    await f?.close();
    await farm?.close();
    await target?.close();
    await sink?.close();
  });

  const portOf = (url: string) => new URL(url).port;
  const workerOf = (fixture: MonitorFixture) =>
    fixture.engine.contexts.get('server-monitor')!.container.resolve(CheckWorker);
  const server = (id: number) => f.engine.knex('monitor_servers').where({ id }).first();

  it('refuses a name that resolves to 169.254.169.254 before connecting: status refused, logged and alerted', async () => {
    network = loopbackNetwork({ 'metadata.test': '169.254.169.254' });
    const org = await organization(f.engine, { plan: 'pro', admin: 'meta@acme.test' });
    const id = await addServer(f.engine, org, 'http://metadata.test/latest/meta-data/', { title: 'Metadata' });
    const refused = 'address 169.254.169.254 is not allowed (link-local/metadata)';
    expect(await workerOf(f).run(id)).to.deep.equal({ up: false, status: 'refused', responseMs: null, error: refused });
    // Asked once (a refusal is not tried again), and nothing was connected to.
    expect(network.asked).to.deep.equal(['metadata.test']);
    expect(network.connected).to.deep.equal([]);

    expect(await server(id)).to.include({ status: 'refused' });
    const logs = await f.engine.knex('monitor_logs').where({ server_id: id }).select('updated_status', 'note');
    expect(logs).to.deep.equal([
      { updated_status: 'refused', note: `http://metadata.test/latest/meta-data/ failed (${refused})` },
    ]);
    await waitFor(() => sink.to('meta@acme.test').length === 1, 10_000);
    const alert = await sink.to('meta@acme.test')[0].parse();
    expect(alert.subject).to.equal('DOWN: Metadata');
    expect(alert.text).to.contain(refused);
  });

  it('refuses metadata and link-local addresses given as such, in any spelling, without connecting', async () => {
    network = loopbackNetwork({});
    const org = await organization(f.engine, { plan: 'pro' });
    const cases: Array<[string, string]> = [
      ['http://169.254.169.254/latest/', '169.254.169.254'],
      ['http://2852039166/', '169.254.169.254'],
      ['http://[::ffff:169.254.169.254]/', '::ffff:a9fe:a9fe'],
      ['http://[fd00:ec2::254]/', 'fd00:ec2::254'],
      ['http://100.100.100.200/latest/meta-data/', '100.100.100.200'],
      ['http://[fe80::1]:8080/', 'fe80::1'],
      ['http://[64:ff9b::a9fe:a9fe]/', '64:ff9b::a9fe:a9fe'],
    ];
    for (const [endpoint, address] of cases) {
      const id = await addServer(f.engine, org, endpoint);
      expect(await workerOf(f).run(id), endpoint).to.include({
        status: 'refused',
        error: `address ${address} is not allowed (link-local/metadata)`,
      });
    }
    expect(network.connected).to.deep.equal([]);
  });

  it('follows a redirect from one loopback server to another (private to private)', async () => {
    const org = await organization(f.engine, { plan: 'pro' });
    const to = encodeURIComponent(`${target.url}/status/204`);
    const id = await addServer(f.engine, org, `${farm.url}/redirect?to=${to}`);
    expect(await workerOf(f).run(id)).to.include({ up: true, status: '204' });
    expect(target.hits.get('/status/204')).to.equal(1);
  });

  it('finds a chain of redirects with no end down once the redirects allowed are spent, as a browser does', async () => {
    const org = await organization(f.engine, { plan: 'pro' });
    const id = await addServer(f.engine, org, `${farm.url}/chain/1`);
    expect(await workerOf(f).run(id)).to.include({
      up: false,
      status: '302',
      error: 'too many redirects (more than 5)',
    });
  });

  it('finds a redirect loop down as a chain without end, and a body cut off or stalled down, in plain words', async () => {
    const addresses = f.engine.contexts.get('server-monitor')!.container.resolve<MonitorAddresses>(MONITOR_ADDRESSES);
    const checker = new HttpChecker({ timeoutMs: 1_000, maxRedirections: 5 }, addresses);
    try {
      // undici's own message ("Redirect loop detected ... use an Agent") was recorded, as unreachable.
      expect(await checker.check(`${farm.url}/loop/a`)).to.include({
        up: false,
        status: '302',
        error: 'too many redirects (a loop)',
      });
      // A 300 with a Location is followed, as undici does: to its 503.
      expect(await checker.check(`${farm.url}/choices`)).to.include({ up: false, status: '503' });
      // Both were up: the body was not read to its end.
      const cut = await checker.check(`${farm.url}/cut`);
      expect(cut).to.include({ up: false, status: 'unreachable' });
      expect(cut.error).to.match(/^answer cut off \(/);
      const stalled = await checker.check(`${farm.url}/stall`);
      expect(stalled).to.include({ up: false, status: 'timeout' });
      // The request's deadline or undici's body timeout, whichever fires first.
      expect(stalled.error).to.match(/^timed out after 1000 ms( \(UND_ERR_BODY_TIMEOUT\))? in the body$/);
      // An answer undici's parser refuses (a 101 to a GET) is said so, not as its assertion's source text.
      const raw = net.createServer((socket) => socket.end('HTTP/1.1 101 Switching Protocols\r\n\r\n'));
      await new Promise<void>((resolve) => raw.listen(0, '127.0.0.1', resolve));
      try {
        const { port } = raw.address() as AddressInfo;
        expect(await checker.check(`http://127.0.0.1:${port}/`)).to.include({
          up: false,
          status: 'unreachable',
          error: 'invalid HTTP answer (ERR_ASSERTION)',
        });
      } finally {
        raw.close();
      }
      // 40 KiB of cookies is up, as in a browser (undici's own limit, 16 KiB, said unreachable); 300 KiB is not.
      expect(await checker.check(`${farm.url}/big-headers/40`)).to.include({ up: true, status: '200' });
      expect(await checker.check(`${farm.url}/big-headers/300`)).to.include({
        up: false,
        status: 'unreachable',
        error: 'answer headers over 256 KiB (UND_ERR_HEADERS_OVERFLOW)',
      });
      // TLS to a plain HTTP port: OpenSSL's message, its line breaks gone.
      const tls = await checker.check(`https://127.0.0.1:${portOf(farm.url)}/`);
      expect(tls).to.include({ up: false, status: 'unreachable' });
      expect(tls.error).to.match(/^ERR_SSL_WRONG_VERSION_NUMBER: [ -~]+$/);
    } finally {
      await checker.close();
    }
  });

  it("times a redirecting endpoint's chain once, though the first hop is asked twice", async () => {
    const addresses = f.engine.contexts.get('server-monitor')!.container.resolve<MonitorAddresses>(MONITOR_ADDRESSES);
    const checker = new HttpChecker({ timeoutMs: 10_000, maxRedirections: 5 }, addresses);
    try {
      // Both asks were counted: over the timeout on a server that was up.
      const late = await checker.check(`${farm.url}/late-redirect/1500`);
      expect(late).to.include({ up: true, status: '200' });
      expect(late.responseMs).to.be.within(1_450, 2_999);
    } finally {
      await checker.close();
    }
  });

  it('with no redirect allowed, takes a redirect as an answer below 400 (up), not as a chain spent', async () => {
    const addresses = f.engine.contexts.get('server-monitor')!.container.resolve<MonitorAddresses>(MONITOR_ADDRESSES);
    const checker = new HttpChecker({ timeoutMs: 5_000, maxRedirections: 0 }, addresses);
    try {
      expect(await checker.check(`${farm.url}/chain/1`)).to.include({ up: true, status: '302', error: null });
    } finally {
      await checker.close();
    }
  });

  it('does not follow a redirect from a public address into loopback or a private network, connecting nowhere', async () => {
    network = loopbackNetwork({
      'public.test': '93.184.216.34',
      'other-public.test': '93.184.216.35',
      'intranet.test': '10.1.2.3',
    });
    const org = await organization(f.engine, { plan: 'pro' });
    const from = `http://public.test:${portOf(farm.url)}/redirect?to=`;
    const before = target.connections();

    const toLoopback = await addServer(f.engine, org, from + encodeURIComponent(`${target.url}/status/200`));
    expect(await workerOf(f).run(toLoopback)).to.include({
      up: false,
      status: 'refused',
      error: 'a redirect from a public address to 127.0.0.1 (private or loopback) is not followed',
    });
    // A private address a name resolves to is not told, the name is.
    const toIntranet = await addServer(f.engine, org, from + encodeURIComponent('http://intranet.test/admin'));
    expect(await workerOf(f).run(toIntranet)).to.include({
      status: 'refused',
      error: 'a redirect from a public address to intranet.test (private or loopback) is not followed',
    });
    expect(target.connections(), 'the redirect target was never connected to').to.equal(before);
    // Only the public address: each check's first GET through the shared agent (its connection kept for the
    // next), then again by the check's own agent, which refuses the redirect before connecting.
    expect([...new Set(network.connected)]).to.deep.equal(['93.184.216.34']);
    expect(network.connected.length).to.be.within(3, 4);
    const connectedBefore = network.connected.length;

    // Public to public is followed (the second public address is loopback's too, here).
    const elsewhere = encodeURIComponent(`http://other-public.test:${portOf(target.url)}/status/200`);
    const toPublic = await addServer(f.engine, org, from + elsewhere);
    expect(await workerOf(f).run(toPublic)).to.include({ up: true, status: '200' });
    // Its own agent connects anew to the first public address, then to the second.
    expect(network.connected.slice(connectedBefore).slice(-2)).to.deep.equal(['93.184.216.34', '93.184.216.35']);
    expect(target.hits.get('/status/200')).to.equal(1);
  });

  it('reads no certificate at a metadata address: the SSL check keeps why, and goes on', async () => {
    network = loopbackNetwork({ 'metadata.test': '169.254.169.254' });
    const org = await organization(f.engine, { plan: 'pro' });
    const byName = await addServer(f.engine, org, 'https://metadata.test/');
    const byAddress = await addServer(f.engine, org, 'https://[fd00:ec2::254]/');
    const run = await f.engine.contexts.get('server-monitor')!.container.resolve(SslService).check();
    expect(run.busy).to.equal(false);
    const errors = await f.engine
      .knex('monitor_certificates')
      .whereIn('server_id', [byName, byAddress])
      .orderBy('server_id')
      .pluck('error');
    expect(errors).to.deep.equal([
      'address 169.254.169.254 is not allowed (link-local/metadata)',
      'address fd00:ec2::254 is not allowed (link-local/metadata)',
    ]);
    expect(network.connected).to.deep.equal([]);
  });

  it('lets MONITOR_ALLOWED_RANGES allow a link-local range, and stops start-up at an entry it cannot read', async () => {
    network = loopbackNetwork({ 'device.test': '169.254.10.20', 'metadata.test': '169.254.169.254' });
    const allowing = await monitorFixture(backend(), { env: { MONITOR_ALLOWED_RANGES: '169.254.10.0/24, fe80::/64' } });
    try {
      const org = await organization(allowing.engine, { plan: 'pro' });
      const device = await addServer(allowing.engine, org, `http://device.test:${portOf(farm.url)}/status/200`);
      expect(await workerOf(allowing).run(device)).to.include({ up: true, status: '200' });
      expect(network.connected).to.deep.equal(['169.254.10.20']);
      // Outside the ranges allowed: refused still.
      const metadata = await addServer(allowing.engine, org, 'http://metadata.test/');
      expect(await workerOf(allowing).run(metadata)).to.include({ status: 'refused' });
      expect(network.connected).to.deep.equal(['169.254.10.20']);
    } finally {
      await workerOf(allowing).checker.close();
      await allowing.close();
    }
    const error = await monitorFixture(backend(), {
      env: { MONITOR_ALLOWED_RANGES: '169.254.0.0/16,link-local' },
    }).catch((err: Error) => err);
    expect(error).to.be.instanceOf(ConfigError);
    expect((error as Error).message).to.equal(
      'MONITOR_ALLOWED_RANGES: "link-local" is not an IP address or CIDR range',
    );
  });
});
