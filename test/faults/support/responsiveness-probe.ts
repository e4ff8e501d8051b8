/** Quantile q (0..1) of the values, 0 when there are none. */
export const quantile = (values: number[], q: number) =>
  values.length ? [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))] : 0;

export interface Probed {
  route: string;
  at: number;
  ms: number;
  status: number;
}

/**
 * Asks each route in turn, one request at a time, `everyMs` apart, until stopped: how long the API takes
 * to answer while something it depends on hangs. A request not answered within `patienceMs` is status 0.
 */
export class ResponsivenessProbe {
  readonly answers: Probed[] = [];
  private running = true;
  private readonly loop: Promise<void>;

  constructor(
    private readonly ask: (route: string, signal: AbortSignal) => Promise<Response>,
    private readonly routes: string[],
    private readonly everyMs = 200,
    private readonly patienceMs = 30_000,
  ) {
    this.loop = this.run();
  }

  private async run(): Promise<void> {
    for (let i = 0; this.running; i++) {
      const route = this.routes[i % this.routes.length];
      const at = Date.now();
      let status = 0;
      try {
        const res = await this.ask(route, AbortSignal.timeout(this.patienceMs));
        await res.arrayBuffer();
        status = res.status;
      } catch {
        status = 0;
      }
      this.answers.push({ route, at, ms: Date.now() - at, status });
      await new Promise((resolve) => setTimeout(resolve, this.everyMs));
    }
  }

  async stop(): Promise<Probed[]> {
    this.running = false;
    await this.loop;
    return this.answers;
  }

  /** Per route: requests, p50, p95 and max ms, and statuses other than 200. */
  summary(): Record<string, { n: number; p50: number; p95: number; max: number; not200: number }> {
    return Object.fromEntries(
      this.routes.map((route) => {
        const mine = this.answers.filter((a) => a.route === route);
        const ms = mine.map((a) => a.ms);
        return [
          route,
          {
            n: mine.length,
            p50: quantile(ms, 0.5),
            p95: quantile(ms, 0.95),
            max: Math.max(0, ...ms),
            not200: mine.filter((a) => a.status !== 200).length,
          },
        ];
      }),
    );
  }
}
