import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import { expect } from 'chai';
import { SecretBox } from '../src/secrets/secret-box';
import { APP_KEY_FILE, loadAppKey } from '../src/secrets/app-key';

describe('secrets at rest', () => {
  const box = new SecretBox(crypto.randomBytes(32));

  it('seals a secret so that only the same key opens it, and a changed value does not', () => {
    const sealed = box.seal('whsec_ünïcode');
    expect(sealed).to.match(/^v1:/).and.not.contain('whsec');
    expect(box.seal('whsec_ünïcode')).to.not.equal(sealed);
    expect(box.open(sealed)).to.equal('whsec_ünïcode');
    expect(() => new SecretBox(crypto.randomBytes(32)).open(sealed)).to.throw();
    const bytes = Buffer.from(sealed.slice(3), 'base64');
    bytes[bytes.length - 1] ^= 1;
    expect(() => box.open(`v1:${bytes.toString('base64')}`)).to.throw();
  });

  it('takes APP_KEY, requires it outside local, and keeps a generated one in the data folder', () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-app-key-'));
    try {
      const given = crypto.randomBytes(32);
      expect(loadAppKey({ appEnv: 'production', dataDir, env: { APP_KEY: given.toString('base64') } })).to.deep.equal(
        given,
      );
      expect(() => loadAppKey({ appEnv: 'production', dataDir, env: {} })).to.throw(/APP_KEY is required/);
      expect(() => loadAppKey({ appEnv: 'staging', dataDir, env: { APP_KEY: 'c2hvcnQ=' } })).to.throw(/32 bytes/);
      const generated = loadAppKey({ appEnv: 'local', dataDir, env: {} });
      expect(generated).to.have.length(32);
      expect(loadAppKey({ appEnv: 'local', dataDir, env: {} })).to.deep.equal(generated);
      expect(fs.statSync(path.join(dataDir, APP_KEY_FILE)).mode & 0o777).to.equal(0o600);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
