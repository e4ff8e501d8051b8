import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import { SecretBox, SERVICES, toBool, whileDatabaseAway } from '@switchboard/core';
import { MONITOR_ADDRESSES, MonitorAddresses } from '../shared/addresses';
import { openEndpoint } from '../shared/endpoints';
import { CheckResultWriter } from './result-writer';
import { CHECK_OPTIONS, CheckOptions } from './options';
import { CheckOutcome, HttpChecker } from './http-check';

/** How long a check's result waits for a database that went away (well inside the next premium round). */
const WRITE_WITHIN_MS = 30_000;

/**
 * A check job: one GET of the server's endpoint (its password opened). A new failure is confirmed by a
 * second try a moment later before it counts (no alert for one lost packet; an address refused is no
 * packet lost, so it counts at once); the outcome is written by CheckResultWriter.
 */
@injectable()
export class CheckWorker {
  readonly checker: HttpChecker;

  constructor(
    @inject(SERVICES.Knex) private readonly knex: Knex,
    @inject(CheckResultWriter) private readonly writer: CheckResultWriter,
    @inject(CHECK_OPTIONS) private readonly options: CheckOptions,
    @inject(SERVICES.SecretBox) private readonly secrets: SecretBox,
    @inject(MONITOR_ADDRESSES) addresses: MonitorAddresses,
  ) {
    this.checker = new HttpChecker(
      { timeoutMs: options.timeoutMs, maxRedirections: options.maxRedirections },
      addresses,
    );
  }

  async run(serverId: number): Promise<CheckOutcome | null> {
    const server = await this.knex('monitor_servers')
      .where({ id: serverId })
      .first(
        'id',
        'organization_id',
        'title',
        'endpoint',
        'endpoint_secret',
        'status',
        'is_up',
        'down_alerted',
        'state',
      );
    // Paused since it was queued: nothing checks it.
    if (!server || server.state === 'paused') return null;
    const knownDown = server.is_up !== null && !toBool(server.is_up);
    const url = this.urlOf(server);
    let outcome = this.notStopped(await this.checker.check(url));
    if (!outcome.up && outcome.status !== 'refused' && !knownDown) {
      await new Promise((resolve) => setTimeout(resolve, this.options.confirmDelayMs));
      outcome = this.notStopped(await this.checker.check(url));
    }
    // The server was checked: a database away for a moment delays the result, it does not lose the round.
    const checked = outcome;
    await whileDatabaseAway(() => this.writer.write(server, this.notStopped(checked)), WRITE_WITHIN_MS);
    return outcome;
  }

  /**
   * A check the engine's stop cut short (its connections destroyed) failed for no fault of the server:
   * the job fails writing nothing, and the server is checked in its next round (a shutdown is no outage).
   */
  private notStopped(outcome: CheckOutcome): CheckOutcome {
    if (this.checker.closed) throw new Error('the engine is stopping: the check is left to its next round');
    return outcome;
  }

  /** An endpoint's password opened; one sealed under another key fails the job, saying so (the operator's to fix). */
  private urlOf(server: { id: unknown; endpoint: string; endpoint_secret: string | null }): string {
    try {
      return openEndpoint(server, this.secrets);
    } catch {
      throw new Error(`server ${String(server.id)}: its endpoint's password does not open with this APP_KEY`);
    }
  }
}
