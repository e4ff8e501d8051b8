import type { Knex } from 'knex';

/**
 * How long a MySQL connection may carry a statement with no byte coming back before it is given up as
 * stalled: its statement fails (a 503, a job's retry) and the pool replaces it. Behind a network that
 * drops packets (a NAT or firewall that lost the connection's state, a failover behind a virtual IP) the
 * operating system takes some 15 minutes to say so; requests waited that long, and a pool of such
 * connections stopped the process for good while the database took new connections (session 35).
 */
export const STALLED_QUERY_MS = 60_000;

/** The part of a mysql2 connection the watch reads. */
interface WatchedConnection {
  stream: { setTimeout(ms: number): void; on(event: 'timeout', listener: () => void): void; destroy(err: Error): void };
  /** The command in flight, or null when the connection is idle in the pool. */
  _command: unknown;
}

/** Whether a knex instance's connections are watched; off until `watchStalledQueries` (long migrations run first). */
const watches = new WeakMap<Knex, { on: boolean }>();

/**
 * The pool's `afterCreate` of a mysql2 knex: a connection silent for `ms` while a statement is in flight
 * is destroyed, once the knex is watched. A connection idle in the pool may be silent as long as it likes.
 */
export function stallWatch(ms = STALLED_QUERY_MS) {
  const watch = { on: false };
  const afterCreate = (connection: WatchedConnection, done: (err: Error | null, c: unknown) => void) => {
    connection.stream.setTimeout(ms);
    connection.stream.on('timeout', () => {
      if (!watch.on || !connection._command) return;
      const err = new Error(`the database did not answer within ${ms / 1000} s: the connection is stalled`);
      connection.stream.destroy(Object.assign(err, { code: 'ETIMEDOUT' }));
    });
    done(null, connection);
  };
  return { afterCreate, register: (knex: Knex) => watches.set(knex, watch) };
}

/**
 * Long-running processes (serve, worker, scheduler) watch for stalled statements once started: the
 * migrations before it, and one-off commands (a rebuild's long statements), are not cut short.
 */
export function watchStalledQueries(knex: Knex): void {
  const watch = watches.get(knex);
  if (watch) watch.on = true;
}
