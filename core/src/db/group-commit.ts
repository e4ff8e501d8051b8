export interface GroupCommitOptions<T> {
  /** Runs in flight at once (default 1). */
  concurrency?: number;
  /** The most a run takes, in weight (default: no limit); an item heavier than that runs alone. */
  maxWeight?: number;
  /** An item's weight (default 1): the events of a request, say. */
  weight?: (item: T) => number;
  /**
   * With concurrency above 1, a further run starts only once as much weight waits as the lightest run in
   * flight carries: runs at once stay as full as one run alone would be, each paying its fixed cost for
   * as many items (default false: as soon as a place is free).
   */
  evenRuns?: boolean;
}

interface Waiting<T, R> {
  item: T;
  resolve(result: R): void;
  reject(err: unknown): void;
}

/**
 * Runs work submitted at about the same time together, as databases group commits: an item submitted
 * while no run is in flight starts one at once (no added wait at low load); items submitted while runs
 * are in flight wait, and the next run takes them all. Under load, one transaction serves many requests.
 * When a run of several items fails, each is run again alone, so that one bad item fails only itself.
 */
export class GroupCommit<T, R> {
  private readonly waiting: Array<Waiting<T, R>> = [];
  /** The weight each run in flight carries. */
  private readonly inFlight: number[] = [];

  constructor(
    private readonly run: (items: T[]) => Promise<R[]>,
    private readonly options: GroupCommitOptions<T> = {},
  ) {}

  submit(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.inFlight.length < (this.options.concurrency ?? 1) && this.waiting.length) {
      if (this.options.evenRuns && this.inFlight.length && this.weightOf(this.waiting) < Math.min(...this.inFlight))
        return;
      const taken = this.take();
      const weight = this.weightOf(taken);
      this.inFlight.push(weight);
      void this.runTogether(taken).finally(() => {
        this.inFlight.splice(this.inFlight.indexOf(weight), 1);
        this.pump();
      });
    }
  }

  private weightOf(items: Array<Waiting<T, R>>): number {
    const { weight } = this.options;
    return weight ? items.reduce((n, w) => n + weight(w.item), 0) : items.length;
  }

  private take(): Array<Waiting<T, R>> {
    const { maxWeight = Infinity, weight = () => 1 } = this.options;
    let total = 0;
    let n = 0;
    while (n < this.waiting.length) {
      total += weight(this.waiting[n].item);
      if (n > 0 && total > maxWeight) break;
      n++;
    }
    return this.waiting.splice(0, n);
  }

  private async runTogether(taken: Array<Waiting<T, R>>): Promise<void> {
    try {
      const results = await this.run(taken.map((w) => w.item));
      taken.forEach((w, i) => w.resolve(results[i]));
    } catch (err) {
      if (taken.length === 1) return taken[0].reject(err);
      for (const w of taken)
        await this.run([w.item]).then(
          ([result]) => w.resolve(result),
          (alone) => w.reject(alone),
        );
    }
  }
}
