#!/usr/bin/env node
'use strict';
require('reflect-metadata');
const { runCli } = require('@switchboard/core');

// runCli resolves once the command is done (for serve/worker/scheduler: after a graceful shutdown),
// so exiting here never cuts work short; it only ends a process a stray handle would keep alive. A
// shutdown that failed set process.exitCode: exiting with 0 would hide it.
runCli(process.argv).then((code) => process.exit(code || Number(process.exitCode ?? 0) || 0));
