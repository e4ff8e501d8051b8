import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { requiredRedisUrl, uniqueSuffix, waitFor } from '@switchboard/core/testing';
import { exitOf, freePort, startCli } from '../src/cli';

/**
 * Whoever waits for a process's "started" line may send SIGTERM at once. Node ends a process whose
 * SIGTERM has no listener by the signal's default, with no graceful close: the handler must be there
 * before the line is written (a worker test's rare exit by signal, session 34). A preloaded probe says,
 * as each line is written, how many SIGTERM listeners the process has.
 */
const PROBE = `
const fs = require('node:fs');
const say = (text) => {
  if (/started|Switchboard is serving/.test(String(text)))
    fs.appendFileSync(process.env.SIGNAL_PROBE_FILE, process.listenerCount('SIGTERM') + ' ' + String(text).replace(/\\n/g, ' ') + '\\n');
};
const writeSync = fs.writeSync;
fs.writeSync = function (fd, data, ...rest) { if (fd === 1) say(data); return writeSync.call(this, fd, data, ...rest); };
const write = process.stdout.write;
process.stdout.write = function (data, ...rest) { say(data); return write.call(this, data, ...rest); };
`;

describe('serve, worker and scheduler at start-up', () => {
  it('listen for SIGTERM before they say they are up', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'switchboard-signal-'));
    const probe = path.join(dir, 'probe.cjs');
    fs.writeFileSync(probe, PROBE);
    const redisUrl = (await requiredRedisUrl())!;
    try {
      for (const [command, upLine] of [
        ['serve', 'Switchboard is serving'],
        ['worker', 'worker started'],
        ['scheduler', 'scheduler started'],
      ]) {
        const probeFile = path.join(dir, `${command}.txt`);
        const child = startCli([command], {
          DATA_DIR: path.join(dir, 'data'),
          DATABASE_URL: '',
          REDIS_URL: redisUrl,
          REDIS_PREFIX: `sbt_${uniqueSuffix()}`,
          PORT: String(await freePort()),
          LOG_LEVEL: 'info',
          NODE_OPTIONS: `--require ${probe}`,
          SIGNAL_PROBE_FILE: probeFile,
        });
        let output = '';
        child.stdout!.on('data', (chunk) => (output += chunk));
        try {
          await waitFor(() => output.includes(upLine), 60_000);
        } finally {
          child.kill('SIGTERM');
          expect([command, await exitOf(child)]).to.deep.equal([command, 0]);
        }
        const seen = fs.readFileSync(probeFile, 'utf8').trim().split('\n');
        const up = seen.find((line) => line.includes(upLine));
        expect([command, up?.split(' ')[0]]).to.deep.equal([command, '1']);
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }).timeout(180_000);
});
