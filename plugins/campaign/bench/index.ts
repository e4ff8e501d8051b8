export { audienceBenchmark } from './audience';
