import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import { SERVICES, toBool } from '@switchboard/core';
import { MONITOR_ADDRESSES, MonitorAddresses } from '../shared/addresses';
import { CheckResultWriter } from './result-writer';
import { CHECK_OPTIONS, CheckOptions } from './options';
import { CheckOutcome, HttpChecker } from './http-check';

/**
 * A check job: one GET of the server's endpoint. A new failure is confirmed by a second try a moment
 * later before it counts (no alert for one lost packet; an address refused is no packet lost, so it
 * counts at once); the outcome is written by CheckResultWriter.
 */
@injectable()
export class CheckWorker {
  readonly checker: HttpChecker;

  constructor(
    @inject(SERVICES.Knex) private readonly knex: Knex,
    @inject(CheckResultWriter) private readonly writer: CheckResultWriter,
    @inject(CHECK_OPTIONS) private readonly options: CheckOptions,
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
      .first('id', 'organization_id', 'title', 'endpoint', 'status', 'is_up', 'down_alerted');
    if (!server) return null;
    const knownDown = server.is_up !== null && !toBool(server.is_up);
    let outcome = await this.checker.check(String(server.endpoint));
    if (!outcome.up && outcome.status !== 'refused' && !knownDown) {
      await new Promise((resolve) => setTimeout(resolve, this.options.confirmDelayMs));
      outcome = await this.checker.check(String(server.endpoint));
    }
    await this.writer.write(server, outcome);
    return outcome;
  }
}
