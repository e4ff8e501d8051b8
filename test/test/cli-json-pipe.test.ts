import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { binPath, runCli } from '../src/cli';

/**
 * A --json answer longer than a pipe holds (64 KiB) reaches a reader that is slow to read it, whole: the
 * CLI exited at once after writing, and what the pipe had not taken yet was lost (a script read 64 KiB
 * of a 76 KiB object). The reader here starts reading 5 s late, as a busy script may.
 */
describe('switchboard --json through a pipe', () => {
  it('writes a long answer whole before it exits, however late the pipe is read', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'switchboard-pipe-'));
    const env = { DATA_DIR: path.join(dir, 'data'), DATABASE_URL: '', REDIS_URL: '', PLUGINS: 'campaign' };
    try {
      expect((await runCli(['migrate'], env)).code).to.equal(0);
      const releases = path.join(dir, 'releases');
      fs.mkdirSync(releases);
      for (let i = 0; i < 1_500; i++)
        fs.writeFileSync(path.join(releases, `r${String(i).padStart(4, '0')}.md`), `# Release ${i}\n\nNotes.\n`);
      const out = path.join(dir, 'out.json');
      const script = `"${process.execPath}" "${binPath}" campaign:changelog:publish --from "${releases}" --json | (sleep 5; cat > "${out}")`;
      await new Promise<void>((resolve, reject) =>
        execFile('bash', ['-c', `set -o pipefail; ${script}`], { env: { ...process.env, ...env } }, (err) =>
          err ? reject(err) : resolve(),
        ),
      );
      const text = fs.readFileSync(out, 'utf8');
      expect(text.length).to.be.above(64 * 1024);
      expect(JSON.parse(text).published).to.have.length(1_500);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }).timeout(120_000);
});
