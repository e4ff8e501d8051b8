export { audienceBenchmark } from './audience';
export { sendBenchmark } from './send';
export { ingestBenchmark } from './ingest';
export { analyticsBenchmark } from './analytics';
export { webhooksBenchmark } from './webhooks';
export { embeddedLoadBenchmark } from './embedded-load';
export { oneClickBenchmark } from './one-click';
