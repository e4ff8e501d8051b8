/** True for a unique-index violation on SQLite or MySQL. */
export function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; errno?: number };
  return e.code === 'SQLITE_CONSTRAINT_UNIQUE' || e.code === 'ER_DUP_ENTRY' || e.errno === 1062;
}
