import path from 'node:path';
import type { Knex } from 'knex';
import { loadOnFirstUse } from '../load-on-first-use';
import { createPrivateFile, makePrivateDir } from '../private-files';
import { foldText } from '../fold-text';
import { SQLITE_BUSY_TIMEOUT_MS, yieldBeforeEachStatement } from './yielding-sqlite';
import { stallWatch } from './stalled-queries';

const knexModule = loadOnFirstUse(() => require('knex') as typeof import('knex'));

export type Dialect = 'sqlite' | 'mysql';

/** SQLite's function lower-casing text as JavaScript does (every letter, not ASCII alone). */
/** SQLite's function folding text as searches compare it (foldText): its lower() folds ASCII letters only. */
export const SQLITE_FOLD = 'unicode_fold';

export function dialectOf(databaseUrl: string): Dialect {
  if (databaseUrl.startsWith('sqlite:')) return 'sqlite';
  if (databaseUrl.startsWith('mysql:') || databaseUrl.startsWith('mariadb:')) return 'mysql';
  throw new Error(`DATABASE_URL must start with sqlite: or mysql:, got "${databaseUrl}"`);
}

export interface KnexLog {
  warn(message: string): void;
  error(message: string): void;
}

/**
 * Routes knex's own warnings to the engine's logger. A connection it could not
 * open is left out: the query that wanted it fails, and its caller reports that (a request's 503, a job's
 * retry); knex's line would repeat it once per query while the database is down.
 */
const KNEX_NOISE = [
  'Acquire connection error',
  // A migration runner waiting for another's lock: the migrator says so once, in its own words (knex's pair
  // came several times a second and advised "knex migrate:unlock", no command of ours, unsafe while one runs).
  "Can't take lock to run migrations",
  'If you are sure migrations are not running',
];

const knexLog = (log?: KnexLog) =>
  log && {
    warn: (m: unknown) => {
      if (!KNEX_NOISE.some((start) => String(m).startsWith(start))) log.warn(String(m));
    },
    error: (m: unknown) => log.error(String(m)),
    deprecate: () => undefined,
    debug: () => undefined,
  };

/** `sqlite:./data/x.sqlite`, `sqlite::memory:` or `mysql://user:pass@host:port/db`. */
export function createKnex(
  databaseUrl: string,
  options: {
    pool?: { min?: number; max?: number };
    log?: KnexLog;
    sqliteBusyWaitMs?: number;
    /** How long a statement may go unanswered once watched (stalled-queries.ts); tests shorten it. */
    stalledQueryMs?: number;
  } = {},
): Knex {
  const pool = options.pool ?? {};
  const log = knexLog(options.log);
  if (dialectOf(databaseUrl) === 'sqlite') {
    const filename = databaseUrl.slice('sqlite:'.length) || ':memory:';
    if (filename !== ':memory:') {
      makePrivateDir(path.dirname(path.resolve(filename)));
      // Made before SQLite opens it, which would create it 0644; its -wal and -shm take the main file's mode.
      createPrivateFile(filename);
    }
    const sqlite = knexModule().knex({
      client: 'better-sqlite3',
      connection: { filename },
      useNullAsDefault: true,
      log,
      // better-sqlite3 is synchronous: one connection serialises writes without SQLITE_BUSY.
      pool: {
        min: 1,
        max: 1,
        afterCreate(
          conn: {
            pragma(s: string): unknown;
            function(name: string, options: object, fn: (value: unknown) => unknown): unknown;
          },
          done: (err: Error | null, conn: unknown) => void,
        ) {
          // SQLite's lower() leaves letters past ASCII as they are: searches case-fold with this one.
          conn.function(SQLITE_FOLD, { deterministic: true }, (value) =>
            typeof value === 'string' ? foldText(value) : value,
          );
          conn.pragma('journal_mode = WAL');
          conn.pragma('foreign_keys = ON');
          conn.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
          done(null, conn);
        },
      },
    });
    return yieldBeforeEachStatement(sqlite, options.sqliteBusyWaitMs);
  }
  const url = new URL(databaseUrl.replace(/^mariadb:/, 'mysql:'));
  const stalls = stallWatch(options.stalledQueryMs);
  const mysql = knexModule().knex({
    client: 'mysql2',
    connection: {
      host: url.hostname,
      port: Number(url.port || 3306),
      user: decodeURIComponent(url.username),
      password: decodeURIComponent(url.password),
      database: url.pathname.replace(/^\//, ''),
      timezone: 'Z',
      dateStrings: false,
      supportBigNumbers: true,
      charset: 'utf8mb4',
      // Prepared statements (insertRows) per connection, least recently used closed first: the server
      // allows 16,382 in all, so 100 connections stay under it.
      maxPreparedStatements: 100,
    },
    pool: { min: pool.min ?? 0, max: pool.max ?? 10, afterCreate: stalls.afterCreate },
    log,
  });
  stalls.register(mysql);
  return mysql;
}
