import net from 'node:net';
import { expect } from 'chai';
import request from 'supertest';
import { productionBackend, TestBackend, waitFor } from '@switchboard/core/testing';
import { cliEnv, exitOf, freePort, runCli, startCli } from '../src/cli';

/**
 * A database that is not up yet when a process starts (a machine's boot, a compose file), or that a wrong
 * DATABASE_URL names: the process waits for the first, up to 30 s, and says what to fix for the second.
 */
describe('a database not up yet, or misnamed, when a process starts [mysql]', function () {
  let backend: TestBackend | null = null;
  before(async function () {
    this.timeout(60_000);
    backend = await productionBackend();
  });
  after(async () => backend?.dispose());

  /** DATABASE_URL with another port, user or database, on loopback. */
  const databaseUrl = (change: (url: URL) => void) => {
    const url = new URL(backend!.databaseUrl);
    change(url);
    return url.href;
  };

  it('serve waits for a database that starts answering later, then serves', async function () {
    this.timeout(90_000);
    if (!backend) this.skip();
    const databasePort = await freePort();
    const real = new URL(backend.databaseUrl);
    const httpPort = await freePort();
    const child = startCli(
      ['serve'],
      cliEnv(backend, 'users-projects', {
        DATABASE_URL: databaseUrl((url) => (url.port = String(databasePort))),
        PORT: String(httpPort),
        PUBLIC_URL: `http://127.0.0.1:${httpPort}`,
      }),
    );
    let output = '';
    child.stdout!.on('data', (chunk) => (output += chunk));
    child.stderr!.on('data', (chunk) => (output += chunk));
    let relay: net.Server | undefined;
    try {
      await waitFor(() => output.includes('does not answer yet: waiting up to 30 s'), 20_000);
      expect(output).to.not.contain('Switchboard is serving');
      // The database comes up: its port now leads to the test's MariaDB.
      relay = net
        .createServer((client) => {
          const server = net.connect(Number(real.port || 3306), real.hostname);
          client.pipe(server).pipe(client);
          client.on('error', () => server.destroy());
          server.on('error', () => client.destroy());
        })
        .listen(databasePort, '127.0.0.1');
      await waitFor(() => output.includes('Switchboard is serving'), 45_000);
      await request(`http://127.0.0.1:${httpPort}`).get('/ready').expect(200);
    } finally {
      child.kill('SIGTERM');
      expect(await exitOf(child)).to.equal(0);
      relay?.close();
    }
  });

  it('a command stops at once, saying what to fix, when the database name or the login is wrong', async function () {
    this.timeout(60_000);
    if (!backend) this.skip();
    const started = Date.now();
    const missing = await runCli(
      ['migrate:status'],
      cliEnv(backend, 'users-projects', { DATABASE_URL: databaseUrl((url) => (url.pathname = '/sbt_no_such_db')) }),
    );
    expect(missing.code).to.equal(1);
    expect(missing.stderr).to.contain(
      'has no database of the name DATABASE_URL gives: create it (CREATE DATABASE <name> CHARACTER SET utf8mb4)',
    );
    const login = await runCli(
      ['migrate:status'],
      cliEnv(backend, 'users-projects', {
        DATABASE_URL: databaseUrl((url) => {
          url.username = 'sbt_nobody';
          url.password = 'not-the-password';
        }),
      }),
    );
    expect(login.code).to.equal(1);
    expect(login.stderr).to.contain("refuses DATABASE_URL's user and password");
    expect(login.stderr, 'the password is not shown').to.contain('sbt_nobody:***@').and.not.contain('not-the-password');
    expect(Date.now() - started, 'neither waited for the 30 s').to.be.below(20_000);
  });
});
