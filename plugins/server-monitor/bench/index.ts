export { monitorBenchmark } from './monitor';
export { monitorImportBenchmark } from './import';
