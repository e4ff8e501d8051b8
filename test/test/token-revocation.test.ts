import { expect } from 'chai';
import { describeEachBackend, waitFor } from '@switchboard/core/testing';
import { cliEnv, exitOf, freePort, runCli, runJson, startCli } from '../src/cli';

describeEachBackend('switchboard token:revoke while serve runs', (backend) => {
  const env = () => cliEnv(backend(), 'users-projects');
  let base: string;
  let server: ReturnType<typeof startCli>;
  let orgId: number;

  before(async () => {
    await runJson(['migrate'], env());
    orgId = (await runJson(['org:create', '--name', 'Acme'], env())).id;
    const port = await freePort();
    // The shipped config: verified tokens are cached for 10 s.
    server = startCli(['serve', '--no-scheduler', '--no-worker'], { ...env(), PORT: String(port) });
    base = `http://127.0.0.1:${port}`;
    await waitFor(async () => (await fetch(`${base}/health`).catch(() => null))?.ok === true, 20_000);
  });
  after(async () => {
    server.kill('SIGTERM');
    expect(await exitOf(server)).to.equal(0);
  });

  const status = async (token: string) =>
    (await fetch(`${base}/api/v1/users`, { headers: { Authorization: `Bearer ${token}` } })).status;
  const createToken = async (extra: string[] = []) =>
    runJson<{ id: number; token: string }>(
      ['token:create', '--org', String(orgId), '--name', 'ci', '--permissions', 'users:read', ...extra],
      env(),
    );

  it('refuses the token within a second of the CLI returning', async () => {
    const token = await createToken();
    expect(await status(token.token)).to.equal(200);
    expect(await status(token.token)).to.equal(200);
    const revoked = await runCli(['token:revoke', String(token.id)], env());
    expect(revoked.code).to.equal(0);
    await waitFor(async () => (await status(token.token)) === 401, 1000);
  });

  it('refuses a cached token as soon as its expiry is reached', async () => {
    // The token must be used before it expires: on a busy machine token:create may take seconds, so a token
    // that expired too soon is made again with twice the lead.
    let lead = 6000;
    let expiresAt = Date.now() + lead;
    let token = await createToken(['--expires', new Date(expiresAt).toISOString()]);
    while (Date.now() > expiresAt - 1000) {
      lead *= 2;
      expiresAt = Date.now() + lead;
      token = await createToken(['--expires', new Date(expiresAt).toISOString()]);
    }
    expect(await status(token.token)).to.equal(200);
    await waitFor(() => Date.now() >= expiresAt, lead + 1000);
    expect(await status(token.token)).to.equal(401);
  }).timeout(90_000);
});
