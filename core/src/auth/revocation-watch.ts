import type { Knex } from 'knex';
import { toInt } from '../db/values';

/** How often a process reads the revocation revision: a revocation reaches it within this, plus one read. */
export const REVOCATION_CHECK_MS = 500;

const REVISION_ROW = { id: 1 };

/** Raises the revocation revision, in the transaction that revokes. */
export async function raiseRevocationRevision(trx: Knex | Knex.Transaction): Promise<void> {
  await trx('api_token_revision')
    .where(REVISION_ROW)
    .update({ revision: trx.raw('revision + 1') });
}

/**
 * Polls the revocation revision (one row of the database every process shares, embedded or not) and
 * calls `onChange` when another process revoked a token, or when the revision cannot be read (a process
 * that cannot see revocations must not trust what it cached). Polling starts with `start()`, which
 * reads the revision to compare with first; the timer does not keep the process alive.
 */
export class RevocationWatch {
  private started?: Promise<void>;
  private timer?: NodeJS.Timeout;
  private revision?: number;
  private checking = false;
  private failing = false;
  private stopped = false;

  constructor(
    private readonly knex: Knex,
    private readonly onChange: () => void,
    private readonly onError: (err: unknown) => void,
    private readonly intervalMs = REVOCATION_CHECK_MS,
  ) {}

  /** Resolves once the first revision is read; later calls cost nothing. */
  start(): Promise<void> {
    // After stop() (the engine closing) a late token lookup must not poll a closed pool again.
    if (this.stopped) return Promise.resolve();
    if (this.started) return this.started;
    const started: Promise<void> = this.read().then(
      (revision) => {
        if (this.started !== started) return; // stopped meanwhile
        this.revision = revision;
        this.timer = setInterval(() => void this.check(), this.intervalMs).unref();
      },
      (err: unknown) => {
        if (this.started === started) this.started = undefined;
        throw err;
      },
    );
    this.started = started;
    return started;
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
    this.timer = undefined;
    this.started = undefined;
  }

  private async check(): Promise<void> {
    if (this.checking) return;
    this.checking = true;
    try {
      const revision = await this.read();
      this.failing = false;
      if (revision !== this.revision) {
        this.revision = revision;
        this.onChange();
      }
    } catch (err) {
      if (!this.timer) return; // stopped while reading: the pools are closing
      if (!this.failing) this.onError(err);
      this.failing = true;
      this.onChange();
    } finally {
      this.checking = false;
    }
  }

  private async read(): Promise<number> {
    const row = await this.knex('api_token_revision').where(REVISION_ROW).first('revision');
    return row ? toInt(row.revision) : 0;
  }
}
