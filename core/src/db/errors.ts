/** True for a unique-index violation on SQLite or MySQL. */
export function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; errno?: number };
  return e.code === 'SQLITE_CONSTRAINT_UNIQUE' || e.code === 'ER_DUP_ENTRY' || e.errno === 1062;
}

/** True for an insert whose referenced row is gone (a foreign key) on SQLite or MySQL. */
export function isForeignKeyViolation(err: unknown): boolean {
  const e = err as { code?: string; errno?: number };
  return e.code === 'SQLITE_CONSTRAINT_FOREIGNKEY' || e.code === 'ER_NO_REFERENCED_ROW_2' || e.errno === 1452;
}

/** MySQL/MariaDB codes of a server that is going away or takes no more connections. */
const UNAVAILABLE_CODES = new Set([
  'PROTOCOL_CONNECTION_LOST',
  'ER_SERVER_SHUTDOWN',
  'ER_CONNECTION_KILLED',
  'ER_CON_COUNT_ERROR',
]);

/**
 * True when the database cannot write for want of space: SQLite's file or journal on a full disk
 * (SQLITE_FULL, or an I/O error of its writes), MariaDB's table or disk full. Nothing is wrong with the
 * statement; it succeeds once space is freed.
 */
export function isDatabaseFull(err: unknown): boolean {
  const e = err as { code?: unknown } | null;
  if (!e || typeof e !== 'object' || typeof e.code !== 'string') return false;
  return (
    e.code === 'SQLITE_FULL' ||
    e.code.startsWith('SQLITE_IOERR') ||
    e.code === 'ER_RECORD_FILE_FULL' ||
    e.code === 'ER_DISK_FULL'
  );
}

/**
 * True when the database could not be reached, rather than refusing the statement: an error mysql2 marks
 * fatal (connection refused, reset or timed out: the connection is unusable), the server shutting down,
 * no free connection in the pool in time (KnexTimeoutError), or a SQLite file another process kept
 * write-locked for the whole wait (SQLITE_BUSY, yielding-sqlite.ts), or a database that cannot write for
 * want of space (isDatabaseFull: waited for alike, told apart in what is logged). Node's socket codes alone
 * (ECONNREFUSED) are not enough: an outbound HTTP call or SMTP send fails with them too.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  const e = err as { code?: string; fatal?: boolean; name?: string } | null;
  if (!e || typeof e !== 'object') return false;
  return (
    e.fatal === true ||
    (e.code !== undefined && UNAVAILABLE_CODES.has(e.code)) ||
    e.name === 'KnexTimeoutError' ||
    e.code === 'SQLITE_BUSY' ||
    isDatabaseFull(err)
  );
}

/**
 * True when a statement names a table or column the database lacks: its migrations not run up to this
 * version (`serve --no-migrate` before `migrate`, or an upgrade whose migrate was skipped).
 */
export function isSchemaBehind(err: unknown): boolean {
  const e = err as { code?: string; message?: unknown } | null;
  if (!e || typeof e !== 'object') return false;
  if (e.code === 'ER_NO_SUCH_TABLE' || e.code === 'ER_BAD_FIELD_ERROR') return true;
  return e.code === 'SQLITE_ERROR' && typeof e.message === 'string' && / - no such (table|column): /.test(e.message);
}

/** The database cannot serve the request: out of reach, or not migrated to this version (both a 503). */
export const isDatabaseNotServing = (err: unknown): boolean => isDatabaseUnavailable(err) || isSchemaBehind(err);

/** What a request meeting a database not migrated to this version is told (a 503). */
export const NOT_MIGRATED = 'The database is not migrated to this version of the engine: its operator must run migrate';
