import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { repoRoot } from '../src/cli';

// The reporter npm test runs with (test/mocha-reporter.js): its closing line, the list of tests and hooks that
// used more than a third of their time budget, and TEST_TIMINGS. The slow ones of the fixture may even time
// out on a busy machine: they are listed either way.
const FIXTURE = `
const wait = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
describe('fixture', function () {
  it('slow', () => wait(150)).timeout(300);
  it('fast', () => {});
  it('skipped');
  after(function () {
    this.timeout(300);
    return wait(150);
  });
});
`;

describe('the test reporter', () => {
  it('lists what used over a third of its time budget, writes TEST_TIMINGS and ends with the summary line', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reporter-'));
    try {
      fs.writeFileSync(path.join(dir, 'fixture.spec.js'), FIXTURE);
      const timings = path.join(dir, 'timings.json');
      const args = ['--no-config', '--reporter', path.join(repoRoot, 'test/mocha-reporter.js'), 'fixture.spec.js'];
      const stdout = await new Promise<string>((resolve) =>
        execFile(
          process.execPath,
          [require.resolve('mocha/bin/mocha.js'), ...args],
          { cwd: dir, env: { ...process.env, TEST_TIMINGS: timings } },
          (_error, out) => resolve(out),
        ),
      );
      const lines = stdout.trimEnd().split('\n');
      expect(lines[lines.length - 1]).to.match(/^[12] passed, [012] failed, 1 skipped$/);
      const listed = lines.slice(lines.findIndex((l) => l.includes('more than a third of their time budget')));
      expect(listed.some((l) => l.includes('test fixture slow (fixture.spec.js)'))).to.equal(true);
      expect(listed.some((l) => l.includes('hook fixture "after all" hook'))).to.equal(true);
      expect(listed.some((l) => l.includes('fixture fast'))).to.equal(false);

      const written = JSON.parse(fs.readFileSync(timings, 'utf8'));
      expect(written.map((t: any) => [t.type, t.title, t.file, t.timeout])).to.deep.equal([
        ['test', 'fixture slow', 'fixture.spec.js', 300],
        ['test', 'fixture fast', 'fixture.spec.js', 2000],
        ['hook', 'fixture "after all" hook for "skipped"', 'fixture.spec.js', 300],
      ]);
      expect(written.every((t: any) => typeof t.duration === 'number')).to.equal(true);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
