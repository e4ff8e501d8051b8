import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { createTestEngine, embeddedBackend } from '@switchboard/core/testing';
import campaign from '@switchboard/plugin-campaign';
import usersProjects from '@switchboard/plugin-users-projects';
import serverMonitor from '@switchboard/plugin-server-monitor';
import { repoRoot } from '../src/cli';

const plugins = [campaign, usersProjects, serverMonitor];

describe("plugins' environment variables", function () {
  this.timeout(30_000);

  it("are each in README's configuration table", () => {
    const readme = fs.readFileSync(path.join(repoRoot, 'README.md'), 'utf8');
    // The first cell of each table row names one variable or a few: `SMS_URL` / `SMS_FROM`.
    const firstCells = readme.split('\n').flatMap((line) => (line.startsWith('| `') ? [line.split('|')[1]] : []));
    const listed = new Set(firstCells.flatMap((cell) => [...cell.matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((m) => m[1])));
    const declared = plugins.flatMap((p) =>
      Object.keys((p.envSchema as { properties?: object } | undefined)?.properties ?? {}),
    );
    expect(declared).to.include('SERVER_MONITOR_API_KEY');
    expect(declared.filter((name) => !listed.has(name))).to.deep.equal([]);
  });

  it('stop start-up when the server monitor is told to send SMS by http without an url', async () => {
    const backend = embeddedBackend();
    try {
      let error: Error | undefined;
      await createTestEngine(backend, { plugins, migrate: false, env: { SMS_DRIVER: 'http', SMS_FROM: '+100' } }).catch(
        (err: Error) => (error = err),
      );
      expect(error?.message).to.match(/^Environment of plugin "server-monitor" is invalid: SMS_URL is required/);
    } finally {
      await backend.dispose();
    }
  });
});
