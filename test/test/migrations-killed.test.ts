import { expect } from 'chai';
import knexFactory, { Knex } from 'knex';
import {
  dialectOfKnex,
  Engine,
  listTables,
  loadMigrationFiles,
  MigrationContext,
  schemaFingerprint,
  SERVICES,
  withoutSqliteForeignKeys,
} from '@switchboard/core';
import { createTestEngine, describeEachBackend } from '@switchboard/core/testing';
import campaign from '@switchboard/plugin-campaign';
import monitor from '@switchboard/plugin-server-monitor';
import usersProjects from '@switchboard/plugin-users-projects';

interface Migration {
  up(knex: Knex, context: MigrationContext): Promise<void>;
  down(knex: Knex, context: MigrationContext): Promise<void>;
  config?: { transaction?: boolean };
}

const KILLED = 'killed here by the test';
const FINISHED = 0;
const DDL = /^\s*(create|alter|drop|rename|truncate)\b/i;
const WRITE = /^\s*(create|alter|drop|rename|truncate|insert|update|delete|replace|pragma)\b/i;
const TABLE_NAMED =
  /^\s*(?:create|alter|drop|rename|truncate)\s+(?:unique\s+)?(?:table|index\s+\S+\s+on)\s+(?:if\s+(?:not\s+)?exists\s+)?[`"]?(\w+)/i;

/**
 * A runner killed part-way through a migration leaves what had committed: on MySQL/MariaDB every DDL statement
 * commits on its own (and what ran before it in the migration's transaction); on SQLite only a migration that
 * runs outside a transaction (`config.transaction = false`) leaves anything. `migrate` run again must then
 * finish the migration with the schema a run that was never killed builds. Each migration is killed after
 * every statement that commits, on a database migrated to the one before it, and once finished but not
 * recorded. The data steps were reviewed with rows, killed for real (docs/decisions.md, "A killed migration
 * runs again").
 */
describeEachBackend(
  'migrations: killed after any statement that commits, each runs again to the same schema',
  (backend) => {
    let engine: Engine | undefined;
    after(async () => engine?.close());

    it('every migration of core and the three plugins', async function () {
      // ~15 s on MariaDB (40 s on a loaded host), ~5 s on SQLite.
      this.timeout(240_000);
      engine = await createTestEngine(backend(), { plugins: [campaign, usersProjects, monitor], migrate: false });
      const knex = engine.knex;
      const mysql = dialectOfKnex(knex) === 'mysql';
      const context: MigrationContext = { secrets: engine.container.resolve(SERVICES.SecretBox) };
      const killedAt: string[] = [];
      const failures: string[] = [];
      const applied: Migration[] = [];

      for (const namespace of engine.migrationNamespaces()) {
        for (const file of loadMigrationFiles(namespace)) {
          const migration = require(file.file) as Migration;
          const transactional = migration.config?.transaction !== false;
          const name = `${namespace.id} ${file.name}`;

          const statements = await run(knex, migration, 'up', context);
          applied.push(migration);
          const touched = [...new Set(statements.map((s) => TABLE_NAMED.exec(s)?.[1]).filter((t): t is string => !!t))];
          const built = await shape(knex, touched);
          const commits = statements
            .map((sql, i) => ({ sql, after: i + 1 }))
            .filter(({ sql }) => (mysql && DDL.test(sql)) || (!transactional && WRITE.test(sql)))
            .map(({ after }) => after);

          // Killed once finished, before knex recorded it (a batch with a migration outside a transaction commits
          // each migration before its record): the whole migration runs again on its own work.
          for (const after of [FINISHED, ...commits]) {
            const killed =
              after === FINISHED
                ? `${name}, killed once finished`
                : `${name}, killed after statement ${after} (${statements[after - 1].slice(0, 160)})`;
            try {
              if (after !== FINISHED) {
                await run(knex, migration, 'down', context);
                await killedRun(knex, migration, context, after);
              }
              await run(knex, migration, 'up', context).catch((err: Error) => {
                throw new Error(`failed again: ${err.message.slice(0, 300)}`);
              });
              const difference = differences(built, await shape(knex, touched));
              if (difference.length) throw new Error(`another schema: ${difference.join('; ')}`);
              killedAt.push(`${name}@${after}`);
            } catch (err) {
              failures.push(`${killed}: ${(err as Error).message.slice(0, 600)}`);
              await rebuild(knex, applied, context);
              break;
            }
          }
        }
      }
      expect(failures, failures.join('\n\n')).to.deep.equal([]);
      // The test reached the migrations it is about (every one has a commit point on MySQL; on SQLite those outside a transaction).
      expect(killedAt.length).to.be.greaterThan(100);
    });
  },
);

/** Runs one direction as knex's migrator does (in a transaction unless the migration opts out); returns its statements. */
async function run(
  knex: Knex,
  migration: Migration,
  direction: 'up' | 'down',
  context: MigrationContext,
): Promise<string[]> {
  const statements: string[] = [];
  const seen = (query: { sql: string }) => statements.push(query.sql);
  knex.on('query', seen);
  try {
    if (migration.config?.transaction === false) await migration[direction](knex, context);
    else await knex.transaction((trx) => migration[direction](trx, context));
  } finally {
    knex.removeListener('query', seen);
  }
  return statements.filter((sql) => !/^(begin|commit|rollback)\b/i.test(sql.trim()));
}

/**
 * The same run in its own pool, stopped before statement `after + 1` (a transaction's COMMIT included), then
 * the pool destroyed as a killed process's connections are: the server rolls back what had not committed.
 */
async function killedRun(knex: Knex, migration: Migration, context: MigrationContext, after: number): Promise<void> {
  const config = knex.client.config as Knex.Config;
  const victim = knexFactory({ ...config, pool: { ...config.pool, min: 0, max: 1 } });
  let count = 0;
  victim.on('query', (query: { sql: string }) => {
    if (/^(begin|savepoint)\b/i.test(query.sql.trim())) return;
    if (++count > after) throw new Error(KILLED);
  });
  try {
    const outcome = await run(victim, migration, 'up', context).then(
      () => null,
      (err: Error) => err,
    );
    // Killed after its last statement, a migration outside a transaction has finished: run again, it must hold.
    if (outcome && !outcome.message.includes(KILLED)) throw outcome;
  } finally {
    await victim.destroy();
  }
}

/** A database where the given migrations ran once, in order, none killed. */
async function rebuild(knex: Knex, applied: Migration[], context: MigrationContext): Promise<void> {
  const tables =
    dialectOfKnex(knex) === 'mysql'
      ? ((
          await knex.raw('select table_name as name from information_schema.tables where table_schema = database()')
        )[0] as Array<{ name: string }>)
      : ((await knex('sqlite_master')
          .where({ type: 'table' })
          .whereNot('name', 'like', 'sqlite_%')
          .select('name')) as Array<{ name: string }>);
  const drop = async (k: Knex) => {
    for (const { name } of tables) await k.schema.dropTableIfExists(name);
  };
  if (dialectOfKnex(knex) === 'sqlite') await withoutSqliteForeignKeys(knex, () => drop(knex));
  else
    await knex.transaction(async (trx) => {
      await trx.raw('SET FOREIGN_KEY_CHECKS = 0');
      await drop(trx);
      await trx.raw('SET FOREIGN_KEY_CHECKS = 1');
    });
  for (const migration of applied) await run(knex, migration, 'up', context);
}

type Shape = Awaited<ReturnType<typeof shape>>;

/** What the second schema lacks (-) or has more (+) than the first, by table. */
function differences(expected: Shape, actual: Shape): string[] {
  const out: string[] = [];
  const lacks = (a: string[], b: string[]) => a.filter((x) => !b.includes(x));
  for (const t of lacks(expected.tables, actual.tables)) out.push(`- table ${t}`);
  for (const t of lacks(actual.tables, expected.tables)) out.push(`+ table ${t}`);
  for (const [table, want] of Object.entries(expected.touched)) {
    const got = actual.touched[table];
    if (!got) continue;
    for (const part of ['columns', 'indexes', 'foreignKeys'] as const) {
      for (const x of lacks(want[part], got[part])) out.push(`${table}: - ${x}`);
      for (const x of lacks(got[part], want[part])) out.push(`${table}: + ${x}`);
      if (!out.length && JSON.stringify(want[part]) !== JSON.stringify(got[part]))
        out.push(`${table}: ${part} in another order`);
    }
  }
  return out;
}

async function shape(knex: Knex, tables: string[]) {
  const all = await listTables(knex);
  const present = tables.filter((t) => all.includes(t));
  return { tables: all, touched: (await schemaFingerprint(knex, present)).tables };
}
