import dns from 'node:dns';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { request } from 'undici';
import {
  addressInRanges,
  allowedRangesOf,
  AppEnv,
  ConfigError,
  loadConfig,
  METADATA_RANGES,
  OutboundGuard,
} from '../src';

// Only addresses are checked here: nothing connects anywhere but the test's own server on 127.0.0.1.
describe('outbound guard', () => {
  const guards: OutboundGuard[] = [];
  const guardFor = (appEnv: AppEnv, env: Record<string, string> = {}) => {
    const guard = new OutboundGuard(loadConfig({ env: { APP_ENV: appEnv, ...env }, file: false }));
    guards.push(guard);
    return guard;
  };
  afterEach(async () => {
    await Promise.all(guards.splice(0).map((guard) => guard.close()));
  });

  it('refuses private, loopback, link-local, shared, documentation, multicast and reserved addresses', () => {
    const guard = guardFor('production');
    const refused = [
      ['0.0.0.0', '0.1.2.3'],
      ['10.0.0.1', '10.255.255.255'],
      ['100.64.0.1', '100.127.255.254'],
      ['127.0.0.1', '127.255.0.9'],
      ['169.254.169.254', '169.254.0.1'],
      ['172.16.0.1', '172.31.255.255'],
      ['192.0.0.8', '192.0.2.1', '198.51.100.7', '203.0.113.200'],
      ['192.168.0.1', '192.168.255.255'],
      ['198.18.0.1', '198.19.255.255'],
      ['224.0.0.1', '239.255.255.250'],
      ['240.0.0.1', '255.255.255.255'],
      ['::', '::1'],
      ['fc00::1', 'fd00::1', 'fdff:ffff::1'],
      ['fe80::1', 'febf::1'],
      ['ff02::1', 'ff0e::101'],
      ['2001:db8::1', '2001:db8:ffff::1'],
      ['64:ff9b::a00:1', '64:ff9b::808:808'],
      ['::ffff:10.0.0.1', '::ffff:127.0.0.1', '::ffff:169.254.169.254', '::ffff:a00:1'],
      // IPv4-compatible (::a.b.c.d), IPv4-translated (::ffff:0:a.b.c.d), Teredo, discard-only.
      ['::7f00:1', '::a00:1', '::808:808', '::ffff:0:7f00:1', '::ffff:0:808:808'],
      ['2001::1', '2001:0:4136:e378:8000:63bf:3fff:fdd2', '100::1'],
      // Cloud metadata services at addresses that are otherwise public (Azure's WireServer, 6to4 forms).
      ['168.63.129.16', '::ffff:168.63.129.16', '64:ff9b::a83f:8110', '2002:a9fe:a9fe::1'],
    ].flat();
    expect(refused.filter((ip) => guard.isAllowedAddress(ip))).to.deep.equal([]);
    expect(guard.checkUrl('http://169.254.169.254/latest/meta-data/')).to.equal(
      'the url points at a private or loopback address (169.254.169.254)',
    );
    expect(guard.checkUrl('http://[::1]:8080/hook')).to.equal('the url points at a private or loopback address (::1)');
    expect(guard.checkUrl('https://[fd00::1]/hook')).to.match(/private or loopback address \(fd00::1\)/);
    expect(guard.checkUrl('http://[::ffff:10.0.0.1]/hook')).to.match(/private or loopback address \(::ffff:a00:1\)/);
    // The URL parser reads other spellings of an IPv4 address as that address.
    expect(guard.checkUrl('http://2130706433/')).to.match(/\(127\.0\.0\.1\)/);
    expect(guard.checkUrl('http://0x7f.1/')).to.match(/\(127\.0\.0\.1\)/);
    expect(guard.checkUrl('http://10.1/')).to.match(/\(10\.0\.0\.1\)/);
    expect(guard.checkUrl('http://[::127.0.0.1]/')).to.match(/private or loopback address \(::7f00:1\)/);
    expect(guard.checkUrl('http://[::ffff:0:7f00:1]/')).to.match(/private or loopback address/);
    expect(guard.checkUrl('http://[2001:0::1]/')).to.match(/private or loopback address/);
  });

  it('allows public addresses, including ones next to the refused ranges, and names unresolved', () => {
    const guard = guardFor('production');
    const allowed = [
      '93.184.216.34',
      '8.8.8.8',
      '1.0.0.1',
      '100.128.0.1',
      '172.32.0.1',
      '198.20.0.1',
      '223.255.255.255',
      '2606:4700::1111',
      '2a00:1450:4001::200e',
      '2001:4860:4860::8888',
      '2003::1',
      '::ffff:93.184.216.34',
    ];
    expect(allowed.filter((ip) => !guard.isAllowedAddress(ip))).to.deep.equal([]);
    expect(guard.checkUrl('https://93.184.216.34/hook')).to.equal(null);
    expect(guard.checkUrl('https://[2606:4700::1111]:8443/hook?x=1')).to.equal(null);
    expect(guard.checkUrl('https://hooks.example.com/in')).to.equal(null);
    expect(guard.isAllowedAddress('not an address')).to.equal(false);
    expect(guard.isAllowedAddress('127.1')).to.equal(false);
  });

  it('refuses other schemes, credentials in the url and what is not a url', () => {
    const guard = guardFor('production');
    for (const url of ['ftp://example.com/x', 'file:///etc/passwd', 'javascript:alert(1)', 'gopher://example.com']) {
      expect(guard.checkUrl(url), url).to.equal('the url must use http or https');
    }
    for (const url of ['https://user:secret@example.com/', 'https://user@example.com/', 'http://:pw@example.com/']) {
      expect(guard.checkUrl(url), url).to.equal('the url must not contain a user name or password');
    }
    expect(guard.checkUrl('example.com/hook')).to.equal('the url is not a valid url');
    expect(guard.checkUrl('http://')).to.equal('the url is not a valid url');
  });

  it('allows loopback with APP_ENV=local only, and nothing else private', () => {
    const local = guardFor('local');
    for (const ip of ['127.0.0.1', '127.8.9.10', '::1', '::ffff:127.0.0.1']) {
      expect(local.isAllowedAddress(ip), ip).to.equal(true);
    }
    expect(local.checkUrl('http://127.0.0.1:3000/hook')).to.equal(null);
    expect(local.checkUrl('http://[::1]:3000/hook')).to.equal(null);
    for (const ip of ['10.0.0.1', '169.254.169.254', '192.168.1.1', 'fd00::1', '0.0.0.0']) {
      expect(local.isAllowedAddress(ip), ip).to.equal(false);
    }
    for (const appEnv of ['staging', 'production'] as const) {
      const guard = guardFor(appEnv);
      expect(guard.isAllowedAddress('127.0.0.1'), appEnv).to.equal(false);
      expect(guard.isAllowedAddress('::1'), appEnv).to.equal(false);
    }
  });

  it('allows the ranges of OUTBOUND_ALLOWED_RANGES, and stops at one it does not understand', () => {
    const guard = guardFor('production', { OUTBOUND_ALLOWED_RANGES: '127.0.0.0/8, fd00::/8 ,10.1.2.3' });
    for (const ip of ['127.0.0.1', '127.1.2.3', '::ffff:127.0.0.1', 'fd00::1', '10.1.2.3']) {
      expect(guard.isAllowedAddress(ip), ip).to.equal(true);
    }
    for (const ip of ['10.1.2.4', '::1', 'fc00::1', '169.254.169.254']) {
      expect(guard.isAllowedAddress(ip), ip).to.equal(false);
    }
    expect(guard.checkUrl('http://127.0.0.1:9000/')).to.equal(null);
    for (const ranges of ['10.0.0.0/33', '127.0.0.0/8,example.com', '10.0.0.0/8/8']) {
      expect(() => guardFor('production', { OUTBOUND_ALLOWED_RANGES: ranges }), ranges)
        .to.throw(ConfigError, /^OUTBOUND_ALLOWED_RANGES: /)
        .with.property('message')
        .that.contains(ranges.split(',').pop());
    }
  });

  it('lists link-local and cloud metadata addresses apart, in every IPv6 form that carries them too', () => {
    const metadata = [
      ['169.254.169.254', '169.254.0.1', '169.254.170.2', '100.100.100.200', '168.63.129.16', '192.0.0.192'],
      ['fe80::1', 'febf::ffff', 'fd00:ec2::254'],
      ['::ffff:169.254.169.254', '64:ff9b::a9fe:a9fe', '64:ff9b::6464:64c8'],
      ['::a9fe:a9fe', '::ffff:0:a9fe:a9fe', '::a83f:8110', '::ffff:0:c000:c0'],
    ].flat();
    expect(metadata.filter((ip) => !addressInRanges(ip, METADATA_RANGES))).to.deep.equal([]);
    const others = ['10.0.0.1', '127.0.0.1', '100.100.100.201', '169.255.0.1', 'fd00:ec2::253', '::1', '8.8.8.8'];
    expect(others.filter((ip) => addressInRanges(ip, METADATA_RANGES))).to.deep.equal([]);
    expect(() => allowedRangesOf('10.0.0.0/8,nope', 'MONITOR_ALLOWED_RANGES')).to.throw(
      ConfigError,
      'MONITOR_ALLOWED_RANGES: "nope" is not an IP address or CIDR range',
    );
  });

  describe('its dispatcher', () => {
    let server: http.Server;
    let port: number;
    const received: { method: string; url: string; body: string }[] = [];
    let connections = 0;

    before(async () => {
      server = http.createServer((req, res) => {
        let body = '';
        req.setEncoding('utf8');
        req.on('data', (chunk: string) => (body += chunk));
        req.on('end', () => {
          received.push({ method: req.method!, url: req.url!, body });
          if (req.url === '/moved') {
            res.writeHead(302, { location: `http://127.0.0.1:${port}/hook` }).end();
          } else res.end('ok');
        });
      });
      server.on('connection', () => (connections += 1));
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as AddressInfo).port;
    });
    beforeEach(() => {
      received.length = 0;
      connections = 0;
    });
    after(async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    });

    const post = (guard: OutboundGuard, url: string) =>
      request(url, { method: 'POST', body: '{"event":"ping"}', dispatcher: guard.dispatcher });

    it('carries a POST to a loopback server locally, by address and by name', async () => {
      const guard = guardFor('local');
      for (const host of ['127.0.0.1', 'localhost']) {
        const answer = await post(guard, `http://${host}:${port}/hook`);
        expect(answer.statusCode, host).to.equal(200);
        expect(await answer.body.text()).to.equal('ok');
      }
      expect(received).to.deep.equal([
        { method: 'POST', url: '/hook', body: '{"event":"ping"}' },
        { method: 'POST', url: '/hook', body: '{"event":"ping"}' },
      ]);
    });

    it('refuses the connection in production, by address and by name, before anything is sent', async () => {
      const guard = guardFor('production');
      const failure = await post(guard, `http://127.0.0.1:${port}/hook`).catch((err: Error) => err);
      expect(failure).to.be.instanceOf(Error);
      expect((failure as Error).message).to.equal(
        'outbound request refused: the address 127.0.0.1 is private or loopback',
      );
      expect(failure).to.have.property('code', 'ERR_OUTBOUND_ADDRESS_REFUSED');
      const named = await post(guard, `http://localhost:${port}/hook`).catch((err: Error) => err);
      expect(named).to.include({ message: 'getaddrinfo ENOTFOUND localhost', code: 'ENOTFOUND' });
      expect(connections).to.equal(0);
      expect(received).to.deep.equal([]);
    });

    it('answers a name with an internal address exactly as a name that does not resolve', async () => {
      // The resolver is stubbed (the guard looks dns.lookup up at each call): no query leaves the machine.
      const lookup = dns.lookup;
      (dns as any).lookup = (hostname: string, options: object, callback: (...args: unknown[]) => void) => {
        if (hostname === 'internal.example') return callback(null, [{ address: '10.0.0.7', family: 4 }]);
        const error = Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), {
          code: 'ENOTFOUND',
          errno: -3008,
          syscall: 'getaddrinfo',
          hostname,
        });
        callback(error);
      };
      try {
        const guard = guardFor('production');
        const failureOf = async (host: string) => {
          const failure = (await post(guard, `http://${host}/hook`).catch((err: Error) => err)) as Error & {
            code?: string;
          };
          return { message: failure.message.replace(host, 'NAME'), code: failure.code };
        };
        const internal = await failureOf('internal.example');
        expect(internal).to.deep.equal({ message: 'getaddrinfo ENOTFOUND NAME', code: 'ENOTFOUND' });
        expect(await failureOf('nowhere.example')).to.deep.equal(internal);
      } finally {
        (dns as any).lookup = lookup;
      }
      expect(connections).to.equal(0);
    });

    it('lets production reach the ranges of OUTBOUND_ALLOWED_RANGES', async () => {
      const guard = guardFor('production', { OUTBOUND_ALLOWED_RANGES: '127.0.0.0/8' });
      const answer = await post(guard, `http://localhost:${port}/hook`);
      expect(answer.statusCode).to.equal(200);
      await answer.body.dump();
      expect(received).to.have.length(1);
    });

    it('returns a redirect as it is, without following it', async () => {
      const answer = await post(guardFor('local'), `http://127.0.0.1:${port}/moved`);
      expect(answer.statusCode).to.equal(302);
      expect(answer.headers.location).to.equal(`http://127.0.0.1:${port}/hook`);
      await answer.body.dump();
      expect(received.map((r) => r.url)).to.deep.equal(['/moved']);
    });
  });
});
