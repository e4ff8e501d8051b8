export { monitorBenchmark } from './monitor';
