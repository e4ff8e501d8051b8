import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { requiredRedisUrl, uniqueSuffix, waitFor } from '@switchboard/core/testing';
import { exitOf, runCli, startCli } from '../src/cli';

/**
 * A worker's mail links name PUBLIC_URL, else the URL a serve recorded in DATA_DIR, else its own HOST:PORT:
 * a worker started before any serve says that last one is a guess (a review's finding, session 27: a worker
 * started with serve put a port nothing listened on in 4,000 mails).
 */
describe('switchboard worker without PUBLIC_URL', () => {
  it('says at start-up that its links name a guessed HOST:PORT when no serve recorded its URL', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'switchboard-worker-'));
    const redisUrl = (await requiredRedisUrl())!;
    const env = {
      DATA_DIR: dataDir,
      REDIS_URL: redisUrl,
      REDIS_PREFIX: `sbt_${uniqueSuffix()}`,
      PUBLIC_URL: '',
      PORT: '4123',
    };
    const child = startCli(['worker'], env);
    let output = '';
    child.stdout!.on('data', (chunk) => (output += chunk));
    try {
      await waitFor(() => output.includes('PUBLIC_URL is not set and no serve has recorded its URL'), 30_000);
      expect(output).to.contain('"public_url":"http://127.0.0.1:4123"');
    } finally {
      child.kill('SIGTERM');
      expect(await exitOf(child)).to.equal(0);
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }).timeout(60_000);

  it('worker and scheduler without REDIS_URL stop at start-up, saying serve runs them (they would do nothing)', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'switchboard-no-redis-'));
    try {
      for (const command of ['worker', 'scheduler']) {
        const run = await runCli([command], { DATA_DIR: dataDir, REDIS_URL: '', DATABASE_URL: '' });
        expect([command, run.code]).to.deep.equal([command, 1]);
        expect(run.stderr).to.contain(`switchboard ${command} shares jobs with the other processes through Redis`);
        expect(run.stderr).to.contain('serve runs the workers and the scheduler itself');
      }
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }).timeout(60_000);
});
