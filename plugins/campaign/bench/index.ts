export { audienceBenchmark } from './audience';
export { sendBenchmark } from './send';
