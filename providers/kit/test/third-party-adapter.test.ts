import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import type { InboundRequest, ProviderAdapter } from '../src';
import { runAdapterContract } from '../src/contract';

/**
 * A third party's adapter, as its own npm package outside this repository: it depends on the kit only,
 * and passes the same contract suite as the built-in ones. Its scheme: a shared token in a header.
 */
const PACKAGE_JSON = JSON.stringify({ name: 'switchboard-provider-f', version: '1.0.0', main: 'index.js' });
const INDEX_JS = `
const { badSignature, constantTimeEqual, header, isObject, jsonBody, malformed, ourId, text, timeOf } = require('@switchboard/provider-kit');
const TYPES = { delivered: 'delivered', opened: 'opened', bounced: 'bounced' };
module.exports = {
  key: 'provider_f',
  async verify(request, endpoint) {
    const token = header(request, 'x-provider-f-token');
    if (!token || !constantTimeEqual(token, endpoint.secret)) throw badSignature();
  },
  normalize(request) {
    const body = jsonBody(request);
    if (!isObject(body) || !Array.isArray(body.events)) throw malformed('Expected {events: [...]}');
    return body.events.flatMap((e) => {
      if (!isObject(e) || typeof e.id !== 'string') throw malformed('Every event needs an id');
      const type = TYPES[e.type];
      if (!type) return [];
      const [messageId, subscriberId] = String(e.ref ?? '').split('.');
      return [{ type, ...(type === 'bounced' ? { bounce: 'hard' } : {}), recipient: text(e.email),
        messageId: ourId(messageId), subscriberId: ourId(subscriberId), providerMessageId: null,
        providerEventId: e.id, occurredAt: timeOf(e.at, new Date()), raw: e }];
    });
  },
  outgoingHeaders: ({ messageId, subscriberId }) => ({ 'X-Provider-F-Ref': messageId + '.' + subscriberId }),
};
`;

/** Writes the package to a temporary folder whose node_modules holds the kit, as `npm install` would. */
function installProviderF(): string {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'switchboard-provider-f-'));
  const packageDir = path.join(folder, 'node_modules', 'switchboard-provider-f');
  fs.mkdirSync(path.join(folder, 'node_modules', '@switchboard'), { recursive: true });
  fs.symlinkSync(path.resolve(__dirname, '../..'), path.join(folder, 'node_modules', '@switchboard', 'provider-kit'));
  fs.mkdirSync(packageDir);
  fs.writeFileSync(path.join(packageDir, 'package.json'), PACKAGE_JSON);
  fs.writeFileSync(path.join(packageDir, 'index.js'), INDEX_JS);
  return packageDir;
}

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
