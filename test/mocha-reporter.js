'use strict';
// The spec reporter, plus one closing line "N passed, N failed, N skipped" that CI reads. Before that line, the
// tests and hooks that took more than a third of their time budget (a warning: give them a larger this.timeout).
// With TEST_TIMINGS=<file>, every test's and hook's time is also written there as JSON:
// [{ title, file, type: 'test' | 'hook', duration, timeout }] (milliseconds).
const fs = require('node:fs');
const path = require('node:path');
const Mocha = require('mocha');

const { EVENT_TEST_END, EVENT_HOOK_END, EVENT_TEST_FAIL, EVENT_RUN_END } = Mocha.Runner.constants;
const LISTED = 20;

class SpecWithSummary extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    const timings = [];
    const record = (runnable) => {
      if (typeof runnable.duration !== 'number') return; // skipped
      timings.push({
        title: runnable.fullTitle(),
        file: runnable.file ? path.relative(process.cwd(), runnable.file) : undefined,
        type: runnable.type === 'hook' ? 'hook' : 'test',
        duration: runnable.duration,
        timeout: runnable.timeout(),
      });
    };
    runner.on(EVENT_TEST_END, record);
    runner.on(EVENT_HOOK_END, record);
    // A failed hook ends with no "hook end".
    runner.on(EVENT_TEST_FAIL, (runnable) => runnable.type === 'hook' && record(runnable));

    runner.once(EVENT_RUN_END, () => {
      if (process.env.TEST_TIMINGS) fs.writeFileSync(process.env.TEST_TIMINGS, JSON.stringify(timings, null, 1));
      const slow = timings
        .filter((t) => t.timeout > 0 && t.duration * 3 > t.timeout)
        .sort((a, b) => b.duration / b.timeout - a.duration / a.timeout);
      if (slow.length) {
        const s = (ms) => `${(ms / 1000).toFixed(1)} s`;
        process.stdout.write(`\n${slow.length} used more than a third of their time budget (raise their timeout):\n`);
        for (const t of slow.slice(0, LISTED))
          process.stdout.write(`  ${s(t.duration)} of ${s(t.timeout)}  ${t.type} ${t.title} (${t.file})\n`);
        if (slow.length > LISTED) process.stdout.write(`  and ${slow.length - LISTED} more\n`);
      }
      const { passes, failures, pending } = runner.stats;
      process.stdout.write(`\n${passes} passed, ${failures} failed, ${pending} skipped\n`);
    });
  }
}

module.exports = SpecWithSummary;
