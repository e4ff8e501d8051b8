import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import { SERVICES, toDate, toInt } from '@switchboard/core';
import type { Logger } from '@switchboard/core';
import { SendService } from './send-service';
import { SendStore } from './send-store';
import { ScheduleRuns } from './schedule-runs';

/** A claim older than this belongs to a worker that died: its recipients are queued again. */
export const CLAIM_LEASE_MS = 120_000;
/** An active send that recorded nothing for this long has lost its jobs (a flushed Redis, a restart). */
export const STALL_MS = 30_000;
/** A live worker renews its claim every 30 s: one not renewed for two of those has stopped. */
const SILENT_CLAIM_MS = 65_000;

/**
 * Keeps sends going from the database alone, every few seconds on the scheduler: fires due schedules,
 * starts pending sends whose time has come, gives back the claims of dead workers, queues again the ranges of sends that
 * stalled, and finishes sends with nobody left.
 */
@injectable()
export class SendWatchdog {
  constructor(
    @inject(SERVICES.Knex) private readonly knex: Knex,
    @inject(SendStore) private readonly store: SendStore,
    @inject(SendService) private readonly sends: SendService,
    @inject(ScheduleRuns) private readonly schedules: ScheduleRuns,
    @inject(SERVICES.Logger) private readonly logger: Logger,
  ) {}

  /**
   * Mail a stopped worker had claimed waits for its lease to end, with the send showing nothing moving
   * (`queued` unchanged, mail SMTP took before the kill not counted): the send says so until mail passes.
   */
  private async sayWhySilentClaimsWait(sendId: number, now: Date): Promise<void> {
    const silent = await this.store.silentClaims(sendId, new Date(now.getTime() - SILENT_CLAIM_MS));
    if (!silent) return;
    const again = new Date(silent.since.getTime() + CLAIM_LEASE_MS).toISOString();
    await this.store.markWaiting(
      sendId,
      now,
      `${silent.count} recipients claimed by a worker that stopped renewing its claim at ${silent.since.toISOString()}: sent again once the claim lapses, at ${again} (those whose mail SMTP had taken get it twice)`,
    );
  }

  async tick(now: Date): Promise<void> {
    await this.schedules.fireDue(now);
    const due = await this.knex('message_sends')
      .where('status', 'pending')
      .andWhere('scheduled_at', '<=', now)
      .orderBy('scheduled_at')
      .pluck('id');
    // Each send on its own: one that fails (a lock timeout, Redis away for a moment) stops no other.
    const guarded = async (id: number, work: () => Promise<unknown>) => {
      try {
        await work();
      } catch (err) {
        this.logger.error({ err, sendId: id }, 'send watchdog step failed');
      }
    };
    for (const id of due.map(toInt)) {
      await guarded(id, async () => {
        const send = await this.store.get(id);
        if (send) await this.sends.start(send);
      });
    }
    const active = (await this.knex('message_sends').where('status', 'active').select('id', 'updated_at')) as Array<
      Record<string, unknown>
    >;
    for (const row of active) {
      const id = toInt(row.id);
      await guarded(id, async () => {
        const released = await this.store.releaseStaleClaims(id, new Date(now.getTime() - CLAIM_LEASE_MS));
        const stalled = (toDate(row.updated_at)?.getTime() ?? 0) < now.getTime() - STALL_MS;
        if (released || stalled) await this.sends.enqueue(id);
        await this.sayWhySilentClaimsWait(id, now);
      });
    }
  }
}
