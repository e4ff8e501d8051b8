import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import { expect } from 'chai';
import { SecretBox } from '../src/secrets/secret-box';
import { execFile } from 'node:child_process';
import { APP_KEY_FILE, loadAppKey } from '../src/secrets/app-key';
import { localSecret } from '../src/secrets/local-secret';

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

  describe('a secret of the environment, else kept in the data folder (APP_ENV=local)', () => {
    let dataDir: string;
    beforeEach(() => (dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-local-secret-'))));
    afterEach(() => fs.rmSync(dataDir, { recursive: true, force: true }));
    const spec = { variable: 'A_SECRET', file: 'a.secret', generate: () => crypto.randomBytes(24).toString('hex') };

    it('generates it once, mode 0600, says so once, and the variable wins; outside local, none', () => {
      const first = localSecret({ appEnv: 'local', dataDir, env: {} }, spec);
      const file = path.join(dataDir, 'a.secret');
      expect(first).to.deep.include({ from: 'file', file, created: true });
      expect(first?.value).to.match(/^[0-9a-f]{48}$/);
      expect(fs.statSync(file).mode & 0o777).to.equal(0o600);
      expect(localSecret({ appEnv: 'local', dataDir, env: {} }, spec)).to.deep.equal({ ...first, created: false });
      expect(fs.readdirSync(dataDir)).to.deep.equal(['a.secret']);
      expect(localSecret({ appEnv: 'local', dataDir, env: { A_SECRET: 'given' } }, spec)).to.deep.equal({
        value: 'given',
        from: 'env',
      });
      expect(localSecret({ appEnv: 'staging', dataDir, env: {} }, spec)).to.equal(null);
    });

    it('is the same in processes of one data folder that start together', async function () {
      this.timeout(30_000);
      const script = `const { localSecret } = require(${JSON.stringify(require.resolve('../src/secrets/local-secret'))});
        const crypto = require('node:crypto');
        const s = localSecret({ appEnv: 'local', dataDir: process.argv[1], env: {} },
          { variable: 'A_SECRET', file: 'a.secret', generate: () => crypto.randomBytes(24).toString('hex') });
        process.stdout.write(JSON.stringify(s));`;
      const run = () =>
        new Promise<{ value: string; created: boolean }>((resolve, reject) =>
          execFile(process.execPath, ['-e', script, dataDir], (error, stdout, stderr) =>
            error ? reject(new Error(stderr || error.message)) : resolve(JSON.parse(stdout)),
          ),
        );
      const secrets = await Promise.all([run(), run(), run(), run()]);
      expect(new Set(secrets.map((s) => s.value)).size).to.equal(1);
      expect(secrets.filter((s) => s.created)).to.have.length(1);
      expect(fs.readFileSync(path.join(dataDir, 'a.secret'), 'utf8')).to.equal(secrets[0].value);
      expect(fs.readdirSync(dataDir)).to.deep.equal(['a.secret']);
    });
  });
});
