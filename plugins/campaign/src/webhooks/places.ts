/** A claimed delivery, with its receiver's address and sealed secret. */
export interface Due {
  id: number;
  webhookId: number;
  eventId: string;
  body: string;
  attempts: number;
  url: string;
  secret: string;
}

/**
 * Deliveries claimed per place of an answering receiver: its try in flight and three waiting. A claim is
 * made once a place's worth of room is free (dispatcher.ts), so at least two places' worth still wait
 * while its round trips run: with one waiting per place, places ran empty during a fifth of the claims.
 */
export const CLAIMED_PER_PLACE = 4;

interface Waiting {
  due: Due;
  /** Not started by then, it is let go: its lease must still cover a whole try after the start. */
  startBy: number;
}

/**
 * One dispatcher run's claimed deliveries: those in flight, and those claimed ahead waiting for a place,
 * so that a claim is a statement per many tries. A subscription holds at most `placesOf` tries in flight,
 * and claimed CLAIMED_PER_PLACE times that if `claimsAhead` (a receiver that answers), else no more than
 * its places (a receiver that hangs gets its next tries only as its places free, as before); the rest of
 * its due deliveries stay in the database.
 */
export class Places {
  private readonly waiting: Waiting[] = [];
  private readonly inFlightOf = new Map<number, number>();
  private readonly heldOf = new Map<number, number>();
  private flying = 0;

  constructor(
    private readonly concurrency: number,
    private readonly placesOf: (webhookId: number) => number,
    private readonly claimsAhead: (webhookId: number) => boolean,
    /** How long a claimed delivery may wait for a place. */
    private readonly waitMs: number,
  ) {}

  get inFlight(): number {
    return this.flying;
  }

  get held(): number {
    return this.flying + this.waiting.length;
  }

  /** How many more may be claimed. */
  room(): number {
    return CLAIMED_PER_PLACE * this.concurrency - this.held;
  }

  /** How many more of a subscription's may be claimed. */
  roomOf(webhookId: number): number {
    const claims = (this.claimsAhead(webhookId) ? CLAIMED_PER_PLACE : 1) * this.placesOf(webhookId);
    return claims - (this.heldOf.get(webhookId) ?? 0);
  }

  /** Subscriptions that may have no more claimed now. */
  full(): number[] {
    return [...this.heldOf].filter(([id]) => this.roomOf(id) <= 0).map(([id]) => id);
  }

  claimed(rows: Due[], now: number): void {
    for (const due of rows) {
      this.waiting.push({ due, startBy: now + this.waitMs });
      this.heldOf.set(due.webhookId, (this.heldOf.get(due.webhookId) ?? 0) + 1);
    }
  }

  /** The next delivery to start now, in claim order, taking its place; null when none may start. */
  start(now: number): Due | null {
    if (this.flying >= this.concurrency) return null;
    for (let i = 0; i < this.waiting.length; i++) {
      const { due, startBy } = this.waiting[i];
      if (startBy < now) {
        this.waiting.splice(i--, 1);
        this.release(due.webhookId);
        continue;
      }
      const flying = this.inFlightOf.get(due.webhookId) ?? 0;
      if (flying >= this.placesOf(due.webhookId)) continue;
      this.waiting.splice(i, 1);
      this.inFlightOf.set(due.webhookId, flying + 1);
      this.flying++;
      return due;
    }
    return null;
  }

  /** A try ended: its place is free. */
  ended(webhookId: number): void {
    this.inFlightOf.set(webhookId, this.inFlightOf.get(webhookId)! - 1);
    this.flying--;
    this.release(webhookId);
  }

  /** Those still waiting are let go (they are tried again once their lease ends). */
  dropWaiting(): void {
    for (const { due } of this.waiting.splice(0)) this.release(due.webhookId);
  }

  private release(webhookId: number): void {
    const held = this.heldOf.get(webhookId)! - 1;
    if (held) this.heldOf.set(webhookId, held);
    else this.heldOf.delete(webhookId);
  }
}
