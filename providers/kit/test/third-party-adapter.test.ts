import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import type { InboundRequest, ProviderAdapter } from '../src';
import { runAdapterContract } from '../src/contract';
import { installProviderF } from './provider-f-package';

const packageDir = installProviderF();
const providerF = require(packageDir) as ProviderAdapter;
const request = (body: unknown, token?: string): InboundRequest => ({
  rawBody: Buffer.isBuffer(body) ? body : Buffer.from(JSON.stringify(body)),
  headers: token ? { 'x-provider-f-token': token } : {},
  query: {},
});

describe('a third-party adapter loaded from outside the repository', () => {
  after(() => fs.rmSync(path.dirname(path.dirname(packageDir)), { recursive: true, force: true }));

  it('is read from its own folder, not from the workspaces', () => {
    expect(require.resolve(packageDir).startsWith(os.tmpdir())).to.equal(true);
    expect(providerF.key).to.equal('provider_f');
  });
});

runAdapterContract({
  adapter: providerF,
  endpoint: { secret: 'f-token' },
  sign: (body, endpoint) => request(body, endpoint.secret),
  body: Buffer.from(JSON.stringify({ events: [{ id: 'e1', type: 'delivered', email: 'a@b.example' }] })),
  removeEach: [(r) => ({ ...r, headers: {} })],
  signsBody: false,
  refusesReplay: false,
  fixtures: [
    {
      name: 'a delivery and a bounce, and an event it does not count',
      request: request({
        events: [
          { id: 'e1', type: 'delivered', email: 'ada@example.com', at: 1767225600, ref: '3.4' },
          { id: 'e2', type: 'bounced', email: 'ada@example.com', at: '2026-01-01T00:00:00Z' },
          { id: 'e3', type: 'queued' },
        ],
      }),
      events: [
        { type: 'delivered', recipient: 'ada@example.com', messageId: 3, subscriberId: 4, providerEventId: 'e1' },
        { type: 'bounced', bounce: 'hard', messageId: null, occurredAt: '2026-01-01T00:00:00.000Z' },
      ],
    },
  ],
  echo: (headers) => request({ events: [{ id: 'x', type: 'opened', ref: headers['X-Provider-F-Ref'] }] }),
});
