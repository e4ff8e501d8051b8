import type { Logger } from 'pino';

/**
 * A warning that can come thousands of times a second (every request while the database is out of
 * reach): written at most once per interval, carrying how many like it were left out since the last.
 */
export class RepeatedWarning {
  private lastAt = -Infinity;
  private leftOut = 0;

  constructor(
    private readonly intervalMs = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  warn(log: Pick<Logger, 'warn' | 'error'>, fields: Record<string, unknown>, message: string): void {
    this.write(log, 'warn', fields, message);
  }

  error(log: Pick<Logger, 'warn' | 'error'>, fields: Record<string, unknown>, message: string): void {
    this.write(log, 'error', fields, message);
  }

  private write(
    log: Pick<Logger, 'warn' | 'error'>,
    level: 'warn' | 'error',
    fields: Record<string, unknown>,
    message: string,
  ): void {
    const at = this.now();
    if (at - this.lastAt < this.intervalMs) {
      this.leftOut++;
      return;
    }
    log[level](this.leftOut ? { ...fields, left_out: this.leftOut } : fields, message);
    this.lastAt = at;
    this.leftOut = 0;
  }
}
