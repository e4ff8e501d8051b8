import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import { Clock, SERVICES, toBool } from '@switchboard/core';
import { MessageDefaults, MessageDefaultsChanges } from './schemas';

/** Tracking stays off unless an organization turns it on (the issue: off by default). */
const UNSET: MessageDefaults = { track_opens: false, track_clicks: false };

@injectable()
export class MessageDefaultsService {
  constructor(
    @inject(SERVICES.Knex) private readonly knex: Knex,
    @inject(SERVICES.Clock) private readonly clock: Clock,
  ) {}

  async get(orgId: number): Promise<MessageDefaults> {
    const row = await this.knex('message_defaults').where({ organization_id: orgId }).first();
    return row ? { track_opens: toBool(row.track_opens), track_clicks: toBool(row.track_clicks) } : { ...UNSET };
  }

  /** Writes only the fields given, so two changes of different fields at once both stay. */
  async update(orgId: number, changes: MessageDefaultsChanges): Promise<MessageDefaults> {
    await this.knex('message_defaults')
      .insert({ organization_id: orgId, ...UNSET, ...changes, updated_at: this.clock.now() })
      .onConflict('organization_id')
      .merge([...Object.keys(changes), 'updated_at']);
    return this.get(orgId);
  }
}
