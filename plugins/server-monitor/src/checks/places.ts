import { Tier, TIERS } from '../shared/plans';

/**
 * The checks one worker process runs at once, premium first: a place that frees goes to a waiting premium
 * check before any free one, and a tenth of the places only premium checks take, so a premium round starts
 * at once and is never queued behind a free round in flight (issue 27: free work delayed premium past the
 * minute when both ran side by side).
 */
export class CheckPlaces {
  /** The most places free checks hold at once. */
  readonly freeAtMost: number;
  private readonly held: Record<Tier, number> = { premium: 0, free: 0 };
  private readonly waiting: Record<Tier, Array<() => void>> = { premium: [], free: [] };

  constructor(readonly size: number) {
    this.freeAtMost = Math.max(1, size - Math.ceil(size / 10));
  }

  async run<T>(tier: Tier, check: () => Promise<T>): Promise<T> {
    if (this.open(tier)) this.held[tier]++;
    // Handed over with the place already counted as this tier's.
    else await new Promise<void>((resolve) => this.waiting[tier].push(resolve));
    try {
      return await check();
    } finally {
      this.held[tier]--;
      this.handOver();
    }
  }

  private open(tier: Tier): boolean {
    return this.held.premium + this.held.free < this.size && (tier === 'premium' || this.held.free < this.freeAtMost);
  }

  private handOver(): void {
    for (const tier of TIERS)
      while (this.waiting[tier].length && this.open(tier)) {
        this.held[tier]++;
        this.waiting[tier].shift()!();
      }
  }
}
