import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { ConfigError, loadConfig } from '../src';

describe('configuration', () => {
  const tmp = (content: string) => {
    const file = path.join(os.tmpdir(), `sb-config-${process.pid}-${Math.random()}.json`);
    fs.writeFileSync(file, content);
    return file;
  };

  it('has the documented defaults', () => {
    const config = loadConfig({ env: {}, file: false });
    expect(config.port).to.equal(3000);
    expect(config.host).to.equal('127.0.0.1');
    expect(config.appEnv).to.equal('local');
    expect(config.databaseUrl).to.match(/^sqlite:.*data\/switchboard\.sqlite$/);
    expect(config.redisUrl).to.equal(undefined);
    expect(config.publicUrl).to.equal('http://127.0.0.1:3000');
    expect(config.rateLimitScale).to.equal(1);
    expect(config.planRateLimits).to.deep.equal({});
    expect(config.tokenRateLimits).to.deep.equal({});
  });

  it('reads plan and token multipliers of the limits from the config file, as an opt-in', () => {
    const file = tmp(JSON.stringify({ rateLimits: { plans: { pro: 5 }, tokens: { '42': 10 } } }));
    const config = loadConfig({ env: {}, file });
    expect(config.planRateLimits).to.deep.equal({ pro: 5 });
    expect(config.tokenRateLimits).to.deep.equal({ '42': 10 });
  });

  it('reads plugins from the config file and lets PLUGINS choose among them', () => {
    const file = tmp(
      JSON.stringify({ plugins: { a: { package: 'pkg-a', options: { x: 1 } }, b: { enabled: false } } }),
    );
    expect(loadConfig({ env: {}, file }).plugins).to.deep.equal([
      { id: 'a', package: 'pkg-a', options: { x: 1 }, rateLimits: undefined },
    ]);
    expect(loadConfig({ env: { PLUGINS: 'b, c' }, file }).plugins.map((p) => p.package)).to.deep.equal([
      '@switchboard/plugin-b',
      '@switchboard/plugin-c',
    ]);
  });

  it('reads the mail section: pool size, throttle, time limit and DKIM keys read from their files', () => {
    const keyFile = tmp('-----BEGIN PRIVATE KEY-----\nabc\n-----END PRIVATE KEY-----\n');
    const file = tmp(
      JSON.stringify({
        mail: {
          maxConnections: 12,
          messagesPerSecond: 50,
          sendTimeoutMs: 20_000,
          dkim: [{ domain: 'Acme.Test', selector: 's1', privateKeyFile: keyFile }],
        },
      }),
    );
    const config = loadConfig({ env: {}, file });
    expect(config.mail.maxConnections).to.equal(12);
    expect(config.mail.messagesPerSecond).to.equal(50);
    expect(config.mail.sendTimeoutMs).to.equal(20_000);
    expect(config.mail.dkim).to.deep.equal([
      { domain: 'acme.test', selector: 's1', privateKey: fs.readFileSync(keyFile, 'utf8') },
    ]);
    const missing = tmp(
      JSON.stringify({
        mail: { dkim: [{ domain: 'acme.test', selector: 's1', privateKeyFile: '/nonexistent/key.pem' }] },
      }),
    );
    expect(() => loadConfig({ env: {}, file: missing })).to.throw(ConfigError, 'mail.dkim: the key of acme.test');
    expect(() => loadConfig({ env: {}, file: tmp('{"mail": {"maxConnections": 0}}') })).to.throw(
      ConfigError,
      'maxConnections',
    );
    expect(() => loadConfig({ env: {}, file: tmp('{"mail": {"sendTimeoutMs": 0}}') })).to.throw(
      ConfigError,
      'sendTimeoutMs',
    );
  });

  it('masks the password of a URL it says is wrong', () => {
    expect(() => loadConfig({ env: { SMTP_URL: 'ftp://mailer:hunter2@relay.example' }, file: false })).to.throw(
      ConfigError,
      'got "ftp://mailer:***@relay.example"',
    );
    expect(() => loadConfig({ env: { DATABASE_URL: 'mysql://root:hunter2@db:99999/x' }, file: false })).to.throw(
      ConfigError,
      'got "mysql://root:***@db:99999/x"',
    );
    // A password holding / or @ (what makes the URL invalid) is masked whole.
    for (const [url, shown] of [
      ['mysql://app:Xy/9k@db:3306/sb', 'mysql://app:***@db:3306/sb'],
      ['mysql://app:p@ss@db:notaport/x', 'mysql://app:***@db:notaport/x'],
    ])
      expect(() => loadConfig({ env: { DATABASE_URL: url }, file: false })).to.throw(ConfigError, `got "${shown}"`);
  });

  it('says what is wrong with bad values', () => {
    expect(() => loadConfig({ env: { PORT: 'eighty' }, file: false })).to.throw(ConfigError, 'PORT');
    expect(() => loadConfig({ env: { APP_ENV: 'prod' }, file: false })).to.throw(
      ConfigError,
      'APP_ENV must be one of local, staging, production',
    );
    expect(() => loadConfig({ env: { RATE_LIMIT_SCALE: '0' }, file: false })).to.throw(ConfigError, 'RATE_LIMIT_SCALE');
    expect(() => loadConfig({ env: {}, file: tmp('{ nope') })).to.throw(ConfigError, 'not valid JSON');
    // A longer wait than a timer can hold would cut connections at once (session 33).
    expect(() => loadConfig({ env: {}, file: tmp('{"http": {"shutdownTimeoutMs": 3000000000}}') })).to.throw(
      ConfigError,
      '/http/shutdownTimeoutMs must be <= 3600000',
    );
    expect(() => loadConfig({ env: {}, file: tmp('{"http": {"bodyLimit": 5}}') })).to.throw(
      ConfigError,
      '/http/bodyLimit',
    );
    expect(() => loadConfig({ env: {}, file: '/nonexistent/switchboard.json' })).to.throw(
      ConfigError,
      'does not exist',
    );
    // Each names its variable (they failed with "Invalid URL" or a library's words; session 27).
    for (const [env, message] of [
      [{ HOST: '999.1.1.1' }, 'HOST must be a host name or IP address'],
      [{ PUBLIC_URL: 'notaurl' }, 'PUBLIC_URL must be a URL'],
      [{ PUBLIC_URL: 'ftp://x.example' }, 'PUBLIC_URL must be a http:// or https:// URL'],
      [{ REDIS_URL: 'http://x' }, 'REDIS_URL must be a redis:// or rediss:// URL'],
      [{ SMTP_URL: 'foo' }, 'SMTP_URL must be a URL'],
      // Session 34: "Invalid URL", "No database selected" on every statement, a database in memory lost at exit.
      [{ DATABASE_URL: 'mysql://root@127.0.0.1:notaport/x' }, 'DATABASE_URL must be a URL'],
      [{ DATABASE_URL: 'mysql://root@127.0.0.1:3306/' }, 'DATABASE_URL must name a database'],
      [{ DATABASE_URL: 'sqlite:' }, 'DATABASE_URL sqlite: needs a file'],
      [{ DATABASE_URL: 'postgres://x/y' }, 'DATABASE_URL must start with sqlite: (a file), mysql:// or mariadb://'],
      [{ LOG_LEVEL: 'verbose' }, 'LOG_LEVEL must be one of'],
    ] as const)
      expect(() => loadConfig({ env, file: false })).to.throw(ConfigError, message);
    // An IPv6 listen address is bracketed in the URL built from it.
    expect(loadConfig({ env: { HOST: '::1', PORT: '4000' }, file: false }).publicUrl).to.equal('http://[::1]:4000');
  });
});
