import type { Knex } from 'knex';
import { alterTableOnce, type MigrationContext, withoutSqliteForeignKeys } from '@switchboard/core';

const MASKED = '***';
const PAGE = 1_000;

const urlOf = (text: string): URL | null => {
  try {
    return new URL(text);
  } catch {
    return null;
  }
};

/**
 * An endpoint's password is never kept in plain text (docs/decisions.md, server-monitor, Endpoint
 * credentials): `endpoint` keeps the URL with the password masked (`https://user:***@host/`), and
 * `endpoint_secret` the password sealed with the application key. Existing rows are sealed here; the
 * rollback puts the passwords back into the URLs. Kept apart from the plugin's code on purpose: a
 * migration does what it did when it was written.
 */
export async function up(knex: Knex, context: MigrationContext): Promise<void> {
  if (!(await knex.schema.hasColumn('monitor_servers', 'endpoint_secret')))
    await alterTableOnce(knex, 'monitor_servers', (t) => {
      t.text('endpoint_secret').nullable();
    });
  await pages(
    knex,
    (q) => q.whereNull('endpoint_secret').andWhere('endpoint', 'like', '%@%'),
    async (trx, row) => {
      const url = urlOf(String(row.endpoint));
      if (!url?.password || url.password === MASKED) return;
      // The key is read only when a row needs it: a database without credentials migrates without one.
      const sealed = context.secrets.seal(url.password);
      url.password = MASKED;
      await trx('monitor_servers').where({ id: row.id }).update({ endpoint: url.href, endpoint_secret: sealed });
    },
  );
}

/** Not in one transaction: dropping a column of `monitor_servers` copies it in SQLite (withoutSqliteForeignKeys). */
export const config = { transaction: false };

export async function down(knex: Knex, context: MigrationContext): Promise<void> {
  if (!(await knex.schema.hasColumn('monitor_servers', 'endpoint_secret'))) return;
  await pages(
    knex,
    (q) => q.whereNotNull('endpoint_secret'),
    async (trx, row) => {
      const url = new URL(String(row.endpoint));
      url.password = context.secrets.open(String(row.endpoint_secret));
      await trx('monitor_servers').where({ id: row.id }).update({ endpoint: url.href, endpoint_secret: null });
    },
  );
  await withoutSqliteForeignKeys(knex, () =>
    alterTableOnce(knex, 'monitor_servers', (t) => {
      t.dropColumn('endpoint_secret');
    }),
  );
}

type Row = { id: number; endpoint: unknown; endpoint_secret: unknown };

/** The rows `where` selects, by id, a transaction per page of them. */
async function pages(
  knex: Knex,
  where: (q: Knex.QueryBuilder) => Knex.QueryBuilder,
  each: (trx: Knex.Transaction, row: Row) => Promise<void>,
): Promise<void> {
  for (let after = 0; ;) {
    const rows: Row[] = await where(knex('monitor_servers').where('id', '>', after))
      .orderBy('id')
      .limit(PAGE)
      .select('id', 'endpoint', 'endpoint_secret');
    if (!rows.length) return;
    await knex.transaction(async (trx) => {
      for (const row of rows) await each(trx, row);
    });
    after = Number(rows[rows.length - 1].id);
  }
}
