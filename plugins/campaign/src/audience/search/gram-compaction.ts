import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';
import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import { lockedOnMysql, SERVICES, toInt, transactionWithRetry } from '@switchboard/core';
import { decodeInto, emptyBlock, idsOf, readEntries } from './grams';
import { appendSets, GRAM_TABLE } from './gram-rows';

/** Blocks merged in one transaction: short enough that a write waiting on its locks waits little. */
const BLOCKS_PER_TRANSACTION = 32;
/**
 * After each merge, a pause this many times as long as the merge took: a compaction right after a
 * large import then leaves the database and the CPU to searches half the time (at a million
 * subscribers, searches during a merge at full speed took 2 to 3 times as long; twice as long a pause
 * did not make them faster but the compaction 53 s instead of 29 s: issue 27).
 */
const PAUSE_PER_MERGE = 1;

/** One run of the index's rows of an organization, status and bucket (the first columns of its key). */
interface Unit {
  organizationId: number;
  status: string;
  bucket: number;
}

export interface CompactionReport {
  /** (status, bucket, block) groups merged into one row each. */
  blocks: number;
  /** The rows of those groups before the merge, and after (one each). */
  rowsBefore: number;
  rowsAfter: number;
  /** False when the time budget ran out first; the next run goes on where this one stopped. */
  complete: boolean;
}

/**
 * Merges the part rows of the substring index. Every write appends its own row per (status, bucket,
 * block), keyed by its first id, so an import of chunks leaves several rows per block and a search reads
 * them all; merged, a search reads one (docs/architecture.md, Substring search). A merge is a union of
 * sets, so a write before it is kept and a write after it adds a row again: nothing is lost either way.
 */
@injectable()
export class GramCompaction {
  /** Where the last run stopped: the units still to visit of the current pass. */
  private pending: Unit[] = [];

  constructor(@inject(SERVICES.Knex) private readonly knex: Knex) {}

  /** Whether a pass was started and not finished (the budget ran out). */
  get inPass(): boolean {
    return this.pending.length > 0;
  }

  /** Compacts unit by unit until every unit is done or `budgetMs` has passed (then resumes there). */
  async run(budgetMs = Infinity, organizationId?: number): Promise<CompactionReport> {
    const started = Date.now();
    const report: CompactionReport = { blocks: 0, rowsBefore: 0, rowsAfter: 0, complete: true };
    if (!this.pending.length || organizationId !== undefined) this.pending = await this.units(organizationId);
    await nextTurn();
    while (this.pending.length) {
      if (Date.now() - started >= budgetMs) return { ...report, complete: false };
      const unit = this.pending[0];
      const blocks = await this.blocksWithParts(unit);
      await nextTurn();
      for (let i = 0; i < blocks.length; i += BLOCKS_PER_TRANSACTION) {
        const mergeStarted = performance.now();
        const merged = await transactionWithRetry(this.knex, (trx) =>
          mergeBlocks(trx, unit, blocks.slice(i, i + BLOCKS_PER_TRANSACTION)),
        );
        report.blocks += merged.blocks;
        report.rowsBefore += merged.rowsBefore;
        report.rowsAfter += merged.rowsAfter;
        // Requests in between merges (SQLite answers on the event loop too).
        await sleep((performance.now() - mergeStarted) * PAUSE_PER_MERGE);
      }
      this.pending.shift();
    }
    return report;
  }

  private async units(organizationId?: number): Promise<Unit[]> {
    const query = this.knex(GRAM_TABLE)
      .distinct('organization_id', 'subscriber_status', 'bucket')
      .orderBy(['organization_id', 'subscriber_status', 'bucket']);
    if (organizationId !== undefined) query.where('organization_id', organizationId);
    return ((await query) as Array<Record<string, unknown>>).map((r) => ({
      organizationId: toInt(r.organization_id),
      status: String(r.subscriber_status),
      bucket: toInt(r.bucket),
    }));
  }

  private async blocksWithParts(unit: Unit): Promise<number[]> {
    const rows = (await this.knex(GRAM_TABLE)
      .where({ organization_id: unit.organizationId, subscriber_status: unit.status, bucket: unit.bucket })
      .groupBy('block')
      .havingRaw('count(*) > 1')
      .orderBy('block')
      .select('block')) as Array<Record<string, unknown>>;
    return rows.map((r) => toInt(r.block));
  }
}

/**
 * Replaces the rows of each block by one holding the union of their sets, written as any append is.
 * On MySQL the rows are read for update: a write to these blocks waits for the merge, then adds its row.
 */
async function mergeBlocks(trx: Knex.Transaction, unit: Unit, blocks: number[]) {
  const where = { organization_id: unit.organizationId, subscriber_status: unit.status, bucket: unit.bucket };
  const read = trx(GRAM_TABLE).where(where).whereIn('block', blocks).select('block', 'grams');
  const rows = (await lockedOnMysql(read)) as Array<Record<string, unknown>>;
  // block -> gram -> bitmap of offsets
  const sets = new Map<number, Map<string, Uint32Array>>();
  for (const row of rows) {
    const block = toInt(row.block);
    const grams = sets.get(block) ?? sets.set(block, new Map()).get(block)!;
    readEntries(row.grams as Uint8Array, 'all', (gram, set) =>
      decodeInto(grams.get(gram) ?? grams.set(gram, emptyBlock()).get(gram)!, set),
    );
  }
  await trx(GRAM_TABLE).where(where).whereIn('block', blocks).delete();
  await appendSets(trx, unit.organizationId, [
    {
      status: unit.status,
      sets: (function* () {
        for (const [block, grams] of sets)
          for (const [gram, bits] of grams) {
            const offsets: number[] = [];
            idsOf(0, bits, offsets);
            yield { block, gram, offsets };
          }
      })(),
    },
  ]);
  return { blocks: sets.size, rowsBefore: rows.length, rowsAfter: sets.size };
}
