import autocannon from 'autocannon';

export interface LoadFigures {
  requests_per_second: number;
  p50_ms: number;
  p99_ms: number;
  non_2xx: number;
  errors: number;
}

/** Drives one URL with autocannon and reports throughput and latency. */
export async function load(
  url: string,
  options: { connections: number; seconds: number; headers?: Record<string, string> },
): Promise<LoadFigures> {
  const result = await autocannon({
    url,
    connections: options.connections,
    duration: options.seconds,
    headers: options.headers,
  });
  return {
    requests_per_second: Math.round(result.requests.average),
    p50_ms: result.latency.p50,
    p99_ms: result.latency.p99,
    non_2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  };
}

/** Per figure, the median over the rounds. */
export function median(rounds: LoadFigures[]): LoadFigures {
  const mid = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)];
  return {
    requests_per_second: mid(rounds.map((r) => r.requests_per_second)),
    p50_ms: mid(rounds.map((r) => r.p50_ms)),
    p99_ms: mid(rounds.map((r) => r.p99_ms)),
    non_2xx: rounds.reduce((n, r) => n + r.non_2xx, 0),
    errors: rounds.reduce((n, r) => n + r.errors, 0),
  };
}
