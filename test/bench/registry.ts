import { apiBenchmark } from './api';
import { audienceBenchmark } from './audience';

export interface BenchOptions {
  quick: boolean;
  log(line: string): void;
}

export type Benchmark = (options: BenchOptions) => Promise<Record<string, unknown>>;

export const benchmarks: Record<string, Benchmark> = {
  api: apiBenchmark,
  audience: audienceBenchmark,
};
