/** One autocannon run of a phase: what it sent and how fast, with the CPU it cost (ms a request). */
export interface Run {
  requests: number;
  requests_per_second: number;
  p99_ms: number;
  non_2xx: number;
  errors: number;
  seconds: number;
  cpu_ms_a_request: { receiver: number | null; database: number | null };
}

/** A phase's runs, round by round, folded into one: rates over the whole, the worst p99, each round's rate. */
export type Rounds = Run & { rounds_requests_per_second: number[] };

/** The paths compared: the engine, and each baseline of the same requests. */
export type Runners<K extends string> = Record<K, (requests: number[]) => Promise<Run>>;

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

/** `total` request indexes in `rounds` consecutive slices. */
export function slices(total: number, rounds: number): number[][] {
  return Array.from({ length: rounds }, (_, r) => {
    const [from, to] = [Math.floor((total * r) / rounds), Math.floor((total * (r + 1)) / rounds)];
    return Array.from({ length: to - from }, (_, i) => from + i);
  });
}

/**
 * Sends a phase's requests in rounds, every path taking its turn within each round and the order turning
 * by one each round, so that the shared host's drift over minutes falls on every path alike: a round's
 * paths are measured within seconds of each other. Before each turn `settle` lets the work the turn
 * before left behind (MariaDB's purge and flushing) finish, so that no path pays for another's.
 */
export async function alternate<K extends string>(
  runners: Runners<K>,
  parts: number[][],
  settle: () => Promise<void>,
): Promise<Record<K, Rounds>> {
  const keys = Object.keys(runners) as K[];
  const runs = Object.fromEntries(keys.map((k) => [k, [] as Run[]])) as Record<K, Run[]>;
  for (const [r, part] of parts.entries())
    for (let i = 0; i < keys.length; i++) {
      const key = keys[(i + r) % keys.length];
      await settle();
      runs[key].push(await runners[key](part));
    }
  return Object.fromEntries(keys.map((k) => [k, fold(runs[k])])) as Record<K, Rounds>;
}

/**
 * Waits (up to `most` ms) until none of `pids` spends more than a tenth of a core over a quarter second:
 * the processes a benchmark's paths share are idle again.
 */
export async function quiet(pids: number[], cpuSeconds: (pid: number) => number, most = 10_000): Promise<void> {
  const until = Date.now() + most;
  while (Date.now() < until) {
    const before = pids.map(cpuSeconds);
    await new Promise((resolve) => setTimeout(resolve, 250));
    if (pids.every((pid, i) => cpuSeconds(pid) - before[i] < 0.025)) return;
  }
}

function fold(runs: Run[]): Rounds {
  const requests = runs.reduce((n, r) => n + r.requests, 0);
  const seconds = runs.reduce((n, r) => n + r.seconds, 0);
  const cpu = (side: 'receiver' | 'database') =>
    runs.some((r) => r.cpu_ms_a_request[side] === null)
      ? null
      : Number((runs.reduce((n, r) => n + r.cpu_ms_a_request[side]! * r.requests, 0) / requests).toFixed(3));
  return {
    requests,
    requests_per_second: Math.round(requests / seconds),
    p99_ms: Math.max(...runs.map((r) => r.p99_ms)),
    non_2xx: runs.reduce((n, r) => n + r.non_2xx, 0),
    errors: runs.reduce((n, r) => n + r.errors, 0),
    seconds: Number(seconds.toFixed(2)),
    cpu_ms_a_request: { receiver: cpu('receiver'), database: cpu('database') },
    rounds_requests_per_second: runs.map((r) => r.requests_per_second),
  };
}

/** The median over the rounds of ours / the baseline's rate, each round's two measured side by side. */
export function roundsRatio(ours: Rounds, bare: Rounds): number {
  return Number(
    median(ours.rounds_requests_per_second.map((rate, r) => rate / bare.rounds_requests_per_second[r])).toFixed(2),
  );
}

/** The baseline's CPU a request (its process and the database) over ours: 0.5 means ours costs twice. */
export function cpuRatio(ours: Run, bare: Run): number | null {
  const total = (r: Run) =>
    r.cpu_ms_a_request.database === null ? null : r.cpu_ms_a_request.receiver! + r.cpu_ms_a_request.database;
  const [o, b] = [total(ours), total(bare)];
  return o === null || b === null ? null : Number((b / o).toFixed(2));
}
