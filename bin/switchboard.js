#!/usr/bin/env node
'use strict';
require('reflect-metadata');
const { runCli } = require('@switchboard/core');

// runCli resolves once the command is done (for serve/worker/scheduler: after a graceful shutdown),
// so exiting here never cuts work short; it only ends a process a stray handle would keep alive. A
// shutdown that failed set process.exitCode: exiting with 0 would hide it.
// What stdout and stderr still hold for a pipe is written first: exiting at once cut a long --json answer
// at the pipe's 64 KiB (a script read half an object).
// A reader that went away (`| head`) ends the flush (EPIPE) without a stack trace.
const flushed = (stream) =>
  new Promise((resolve) => {
    stream.on('error', resolve);
    stream.write('', resolve);
  });
runCli(process.argv).then(async (code) => {
  await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
  process.exit(code || Number(process.exitCode ?? 0) || 0);
});
