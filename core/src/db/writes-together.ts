import type { Knex } from 'knex';
import { dialectOfKnex } from './dialect';

/**
 * Runs a transaction's writes in order and returns the rows each changed. On MySQL they go as one query of
 * several statements: one write to the server and one answer instead of one each (a socket write to the
 * server, and its wake-up, cost more than a small statement's work). The first that fails stops the rest
 * and fails the call (the caller's transaction is then rolled back). Elsewhere they run one after another.
 */
export async function writesTogether(
  trx: Knex.Transaction,
  statements: Array<Knex.QueryBuilder | Knex.Raw>,
): Promise<number[]> {
  if (!statements.length) return [];
  if (dialectOfKnex(trx) !== 'mysql') {
    const changed: number[] = [];
    for (const statement of statements) {
      const result: unknown = await statement;
      changed.push(typeof result === 'number' ? result : Array.isArray(result) ? result.length : 0);
    }
    return changed;
  }
  const compiled = statements.map((s) => s.toSQL().toNative());
  const [results] = (await trx.raw(
    compiled.map((c) => c.sql).join(';\n'),
    compiled.flatMap((c) => c.bindings) as Knex.RawBinding[],
  )) as [unknown];
  // One statement's answer comes alone, several as a list.
  const answers = (statements.length === 1 ? [results] : results) as Array<{ affectedRows?: number }>;
  return answers.map((a) => a.affectedRows ?? 0);
}
