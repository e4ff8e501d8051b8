import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * A third party's adapter, as its own npm package outside this repository: it depends on the kit only,
 * and passes the same contract suite as the built-in ones. Its scheme: a shared token in a header.
 */
const PACKAGE_JSON = JSON.stringify({ name: 'switchboard-provider-f', version: '1.0.0', main: 'index.js' });
const INDEX_JS = `
const { badSignature, constantTimeEqual, entryOf, header, isObject, jsonBody, malformed, ourId, text, timeOf } = require('@switchboard/provider-kit');
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
      const type = entryOf(TYPES, e.type);
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
export function installProviderF(): string {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'switchboard-provider-f-'));
  const packageDir = path.join(folder, 'node_modules', 'switchboard-provider-f');
  fs.mkdirSync(path.join(folder, 'node_modules', '@switchboard'), { recursive: true });
  fs.symlinkSync(path.resolve(__dirname, '../..'), path.join(folder, 'node_modules', '@switchboard', 'provider-kit'));
  fs.mkdirSync(packageDir);
  fs.writeFileSync(path.join(packageDir, 'package.json'), PACKAGE_JSON);
  fs.writeFileSync(path.join(packageDir, 'index.js'), INDEX_JS);
  return packageDir;
}
