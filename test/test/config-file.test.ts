import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { loadConfig } from '@switchboard/core';
import { repoRoot } from '../src/cli';

describe('the shipped config/switchboard.json', () => {
  const config = loadConfig({ env: {}, file: path.join(repoRoot, 'config/switchboard.json') });

  it('enables the built plugins and keeps the limits the specs state', () => {
    expect(config.plugins.map((p) => p.id)).to.deep.equal(['campaign', 'server-monitor', 'users-projects']);
    expect(config.plugins[2].rateLimits).to.deep.equal({
      windowSeconds: 60,
      perToken: { overall: 100 },
      perAddress: 10,
    });
    // The spec's routes carry their own key and no token: only wrong keys count, per address. The servers API
    // takes a token: 600 per 10 minutes (20 stopped a person on call after 20 reads; session 26).
    expect(config.plugins[1].rateLimits).to.deep.equal({
      windowSeconds: 600,
      perToken: { overall: 600 },
      perAddress: 20,
    });
    expect(config.plugins[0].rateLimits).to.deep.equal({
      windowSeconds: 3600,
      perToken: { overall: 1000, GET: 500, POST: 100, DELETE: 50 },
      perAddress: 100,
    });
  });

  it('is read from a command run in another directory, which has no config of its own', () => {
    const here = process.cwd();
    process.chdir(os.tmpdir());
    try {
      const elsewhere = loadConfig({ env: {} });
      expect(elsewhere.plugins.map((p) => p.id)).to.deep.equal(['campaign', 'server-monitor', 'users-projects']);
    } finally {
      process.chdir(here);
    }
  });

  it('enables the provider adapters built into the repository', () => {
    expect(config.plugins[0].options).to.deep.equal({
      providers: {
        provider_a: '@switchboard/provider-a',
        provider_b: '@switchboard/provider-b',
        provider_c: '@switchboard/provider-c',
        provider_d: '@switchboard/provider-d',
        provider_e: '@switchboard/provider-e',
      },
    });
  });

  it("multiplies no limit by plan or token: the specs' numbers hold for every plan", () => {
    expect(config.planRateLimits).to.deep.equal({});
    expect(config.tokenRateLimits).to.deep.equal({});
  });
});
