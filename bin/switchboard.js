#!/usr/bin/env node
'use strict';
require('reflect-metadata');
const { runCli } = require('@switchboard/core');

runCli(process.argv).then((code) => {
  process.exitCode = code;
});
