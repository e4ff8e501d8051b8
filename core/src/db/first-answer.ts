import type { Knex } from 'knex';
import { dialectOf } from './knex';
import { isDatabaseUnavailable } from './errors';
import { withoutPassword } from '../config/without-password';

/** How long a process waits at start-up for a database that does not answer yet. */
export const DATABASE_CONNECT_MS = 30_000;
const RETRY_EVERY_MS = 500;

/** What a MySQL/MariaDB refusal means, when waiting will not mend it. */
const REFUSALS: Record<string, string> = {
  ER_ACCESS_DENIED_ERROR: "refuses DATABASE_URL's user and password",
  ER_ACCESS_DENIED_NO_PASSWORD_ERROR: "refuses DATABASE_URL's user and password",
  ER_DBACCESS_DENIED_ERROR: "refuses DATABASE_URL's user access to its database",
  ER_BAD_DB_ERROR:
    'has no database of the name DATABASE_URL gives: create it (CREATE DATABASE <name> CHARACTER SET utf8mb4)',
};

/**
 * Waits at start-up for MySQL/MariaDB's first answer: a database started at the same time (a machine's boot,
 * a compose file) is given 30 s, said once at warn level; then the process stops naming it. A refusal that
 * waiting does not mend (user, password, database name) stops it at once, saying which. SQLite is a file:
 * nothing to wait for.
 */
export async function waitForFirstAnswer(
  knex: Knex,
  databaseUrl: string,
  logger: { warn(obj: object, msg: string): void },
  waitMs = DATABASE_CONNECT_MS,
): Promise<void> {
  if (dialectOf(databaseUrl) === 'sqlite') return;
  const where = withoutPassword(databaseUrl);
  const deadline = Date.now() + waitMs;
  let told = false;
  for (;;) {
    try {
      await knex.raw('select 1');
      return;
    } catch (err) {
      const { code, message } = err as { code?: string; message?: string };
      const refusal = code === undefined ? undefined : REFUSALS[code];
      if (refusal) throw new Error(`The database at ${where} ${refusal} (${message}).`);
      if (!isDatabaseUnavailable(err)) throw err;
      if (Date.now() >= deadline)
        throw new Error(
          `The database at ${where} does not answer within ${waitMs / 1000} s (${message}): start it, or correct DATABASE_URL (unset, the embedded default uses SQLite)`,
        );
      if (!told)
        logger.warn({ err: message }, `The database at ${where} does not answer yet: waiting up to ${waitMs / 1000} s`);
      told = true;
      await new Promise((resolve) => setTimeout(resolve, RETRY_EVERY_MS));
    }
  }
}
