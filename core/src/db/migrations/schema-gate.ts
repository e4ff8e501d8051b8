import type { Logger } from 'pino';

/** How long one reading of the applied migrations is trusted: a schema rolled back is seen within this. */
const READ_EVERY_MS = 5_000;
/** While work is held, it is said at most this often. */
const SAY_EVERY_MS = 60_000;

/**
 * Holds the work of a process whose release has migrations the database lacks: a worker started before
 * `migrate`, or one left running while the schema was rolled back under it. Such work would mail, call a
 * webhook or send an alert and then fail to record it on columns that are not there, and the watchdog
 * would do it again (docs/decisions.md, "Work waits for its schema"). The applied migrations are read at
 * most every 5 s, shared by every caller; a reading that fails (the database away) holds nothing, as the
 * work then meets the database itself.
 */
export class SchemaGate {
  private missing: string[] = [];
  private readAt = -Infinity;
  private reading?: Promise<string[]>;
  private saidAt = -Infinity;
  private closed = false;
  private readonly sleepers = new Set<() => void>();

  constructor(
    /** This release's migrations the database lacks, as `namespace:name`. */
    private readonly pendingMigrations: () => Promise<string[]>,
    private readonly logger: Pick<Logger, 'warn' | 'info'>,
    private readonly readEveryMs = READ_EVERY_MS,
  ) {}

  /** Whether the database has every migration of this release (as last read). */
  async isOpen(): Promise<boolean> {
    return (await this.read()).length === 0;
  }

  /**
   * Resolves once the database has every migration of this release: at once while it has (no query
   * within 5 s of the last), else when a reading finds them, every 5 s. Once the process stops, held work
   * stays held for good: it neither runs nor fails, its queue's close gives up on it, and bee-queue hands
   * the job to another worker once it stalls (a failure would spend its retries, or lose it).
   */
  async open(): Promise<void> {
    for (;;) {
      const missing = await this.read();
      if (!missing.length) return;
      if (this.closed) return new Promise<void>(() => undefined);
      await this.sleep();
    }
  }

  /** The process stops: no more readings (its pools close), and held work stays held. */
  close(): void {
    this.closed = true;
    for (const wake of this.sleepers) wake();
    this.sleepers.clear();
  }

  private read(): Promise<string[]> {
    if (this.closed || performance.now() - this.readAt < this.readEveryMs) return Promise.resolve(this.missing);
    this.reading ??= this.pendingMigrations()
      .catch(() => [])
      .then((missing) => {
        this.tell(missing);
        this.missing = missing;
        this.readAt = performance.now();
        return missing;
      })
      .finally(() => (this.reading = undefined));
    return this.reading;
  }

  private tell(missing: string[]): void {
    if (!missing.length) {
      if (this.missing.length)
        this.logger.info('the database has every migration of this release again: held work goes on');
      this.saidAt = -Infinity;
      return;
    }
    if (performance.now() - this.saidAt < SAY_EVERY_MS) return;
    this.saidAt = performance.now();
    this.logger.warn(
      { missing },
      `the database lacks migrations of this release (${missing.join(', ')}): this process holds its jobs and scheduled tasks until "switchboard migrate" has run`,
    );
  }

  private sleep(): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.sleepers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, this.readEveryMs);
      timer.unref();
      this.sleepers.add(wake);
    });
  }
}
