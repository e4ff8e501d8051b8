'use strict';
// In parallel mode (.mocharc.json) each test file runs in a worker process and its tests and hooks reach the
// reporter serialized, without their time budget. Mocha turns a `$$name` key of a serialized object back
// into a method `name()`, so adding `$$timeout` lets the reporter (test/mocha-reporter.js) read
// `runnable.timeout()` as in a serial run. Loaded by `require` in the main process and in every worker.
const { Test, Hook } = require('mocha');

for (const Runnable of [Test, Hook]) {
  const serialize = Runnable.prototype.serialize;
  Runnable.prototype.serialize = function serializeWithTimeout() {
    return { ...serialize.call(this), $$timeout: this.timeout() };
  };
}
