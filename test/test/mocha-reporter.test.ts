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

const EMPTY = `describe('second file', () => it('passes', () => {}));`;

/** Runs the fixture with the reporter (and `args`), answering its stdout and the TEST_TIMINGS it wrote. */
async function runFixture(args: string[]): Promise<{ lines: string[]; written: any[] }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reporter-'));
  try {
    fs.writeFileSync(path.join(dir, 'fixture.spec.js'), FIXTURE);
    fs.writeFileSync(path.join(dir, 'second.spec.js'), EMPTY);
    const timings = path.join(dir, 'timings.json');
    const reporter = ['--no-config', '--reporter', path.join(repoRoot, 'test/mocha-reporter.js')];
    const stdout = await new Promise<string>((resolve) =>
      execFile(
        process.execPath,
        [require.resolve('mocha/bin/mocha.js'), ...reporter, ...args, 'fixture.spec.js', 'second.spec.js'],
        { cwd: dir, env: { ...process.env, TEST_TIMINGS: timings } },
        (_error, out) => resolve(out),
      ),
    );
    return { lines: stdout.trimEnd().split('\n'), written: JSON.parse(fs.readFileSync(timings, 'utf8')) };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

describe('the test reporter', () => {
  const modes: Array<[string, string[]]> = [
    ['serial', []],
    // As .mocharc.json runs the suite: each file in a worker process, time budgets carried to the reporter.
    ['parallel', ['--parallel', '--jobs', '2', '--require', path.join(repoRoot, 'test/mocha-parallel-timeouts.cjs')]],
  ];
  for (const [mode, args] of modes)
    it(`lists what used over a third of its time budget, writes TEST_TIMINGS and ends with the summary line (${mode})`, async () => {
      const { lines, written } = await runFixture(args);
      expect(lines[lines.length - 1]).to.match(/^[23] passed, [012] failed, 1 skipped$/);
      const listed = lines.slice(lines.findIndex((l) => l.includes('more than a third of their time budget')));
      expect(listed.some((l) => l.includes('test fixture slow (fixture.spec.js)'))).to.equal(true);
      expect(listed.some((l) => l.includes('hook fixture "after all" hook'))).to.equal(true);
      expect(listed.some((l) => l.includes('fixture fast'))).to.equal(false);

      const mine = written.filter((t) => t.file === 'fixture.spec.js');
      // A hook's title names the test it ran for (serial) or its suite (parallel).
      const title = (t: any) => t.title.replace(/ (for|in) "[^"]*"$/, '');
      expect(mine.map((t) => [t.type, title(t), t.timeout])).to.deep.equal([
        ['test', 'fixture slow', 300],
        ['test', 'fixture fast', 2000],
        ['hook', 'fixture "after all" hook', 300],
      ]);
      expect(written.every((t) => typeof t.duration === 'number')).to.equal(true);
    }).timeout(30_000);
});
