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
