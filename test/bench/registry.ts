import type { Benchmark } from '@switchboard/core/testing';
import {
  analyticsBenchmark,
  audienceBenchmark,
  embeddedLoadBenchmark,
  ingestBenchmark,
  oneClickBenchmark,
  sendBenchmark,
  webhooksBenchmark,
} from '@switchboard/plugin-campaign/bench';
import { monitorBenchmark, monitorImportBenchmark } from '@switchboard/plugin-server-monitor/bench';
import { apiBenchmark } from './api';
import { cliBenchmark } from './cli';

/** Every benchmark by name; a plugin's own live in its package (`bench/`). */
export const benchmarks: Record<string, Benchmark> = {
  api: apiBenchmark,
  audience: audienceBenchmark,
  send: sendBenchmark,
  ingest: ingestBenchmark,
  monitor: monitorBenchmark,
  'monitor-import': monitorImportBenchmark,
  analytics: analyticsBenchmark,
  webhooks: webhooksBenchmark,
  cli: cliBenchmark,
  'embedded-load': embeddedLoadBenchmark,
  'one-click': oneClickBenchmark,
};
