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
  /** Called whenever the last run in flight ends with nothing waiting: an owner of many may let this one go. */
  onIdle?: () => void;
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
 * When a run of several items fails, its halves run again, in order, down to single items, so that one
 * bad item fails only itself: a burst with one bad item takes about 2·log2(n) runs more, not n, and a run
 * that failed for a passing reason (a lock wait timeout) is over in two.
 */
export class GroupCommit<T, R> {
  private readonly waiting: Array<Waiting<T, R>> = [];
  /** The runs in flight, each with the weight it carries. */
  private readonly inFlight = new Set<{ weight: number }>();

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
    while (this.inFlight.size < (this.options.concurrency ?? 1) && this.waiting.length) {
      if (this.holdsBack()) return;
      const taken = this.take();
      const run = { weight: this.weightOf(taken) };
      this.inFlight.add(run);
      void this.runTogether(taken).finally(() => {
        this.inFlight.delete(run);
        this.pump();
        if (!this.inFlight.size && !this.waiting.length) this.options.onIdle?.();
      });
    }
  }

  /** evenRuns: a further run waits until it would be as full as the lightest in flight (or a whole run). */
  private holdsBack(): boolean {
    if (!this.options.evenRuns || !this.inFlight.size) return false;
    const full = Math.min(this.options.maxWeight ?? Infinity, ...[...this.inFlight].map((r) => r.weight));
    return this.weightOf(this.waiting) < full;
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
      const half = Math.ceil(taken.length / 2);
      await this.runTogether(taken.slice(0, half));
      await this.runTogether(taken.slice(half));
    }
  }
}
