import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { createKnex } from '@switchboard/core';
import { privatePort } from '../../src/private-port';
import { portAnswers, ServerProcess } from './server-process';

export const MARIADBD = '/usr/sbin/mariadbd';
export const MARIADB_INSTALL_DB = '/usr/bin/mariadb-install-db';

/** Test runs are root; mariadbd refuses to run as root unless told `--user=root`. */
const baseArgs = (dir: string) => [
  // First, or the machine's my.cnf (its user, port, datadir) is read as well.
  '--no-defaults',
  `--datadir=${path.join(dir, 'data')}`,
  '--user=root',
];

/**
 * A MariaDB of the test's own: a fresh data folder in a temp directory, its own port and socket, never
 * the machine's server. `stop()` and `kill()` leave the data folder; `start()` opens it again on the same port.
 */
export class PrivateMariaDb extends ServerProcess {
  private constructor(
    readonly dir: string,
    port: number,
  ) {
    super(
      'mariadbd',
      MARIADBD,
      [
        ...baseArgs(dir),
        `--port=${port}`,
        `--socket=${path.join(dir, 'mariadb.sock')}`,
        `--pid-file=${path.join(dir, 'mariadb.pid')}`,
        '--skip-networking=0',
        '--bind-address=127.0.0.1',
        // After a SIGKILL the port's connections linger in TIME_WAIT for a while: wait for it instead of failing.
        '--port-open-timeout=60',
        // Small: the test's data is a few thousand rows, and the machine is shared.
        '--innodb-buffer-pool-size=32M',
        '--skip-log-bin',
      ],
      port,
      path.join(dir, 'mariadb.log'),
    );
  }

  static async start(database = 'switchboard'): Promise<PrivateMariaDb> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'switchboard-faults-mariadb-'));
    const db = new PrivateMariaDb(dir, await privatePort());
    try {
      await promisify(execFile)(MARIADB_INSTALL_DB, [
        ...baseArgs(dir),
        '--auth-root-authentication-method=normal',
        '--skip-test-db',
      ]);
      await db.start();
      const admin = createKnex(db.serverUrl(''));
      try {
        await admin.raw(`CREATE DATABASE \`${database}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
      } finally {
        await admin.destroy();
      }
    } catch (err) {
      await db.dispose();
      throw err;
    }
    return db;
  }

  /** Its own data folder, asked of whatever answers on the port. */
  protected override async answers(): Promise<boolean> {
    if (!(await portAnswers(this.port))) return false;
    const knex = createKnex(this.serverUrl(''));
    try {
      const [rows] = await knex.raw('SELECT @@datadir AS datadir');
      return path.resolve(rows[0].datadir) === path.join(this.dir, 'data');
    } catch {
      return false;
    } finally {
      await knex.destroy();
    }
  }

  /** root without a password: the server listens on 127.0.0.1 only and lives as long as the test. */
  serverUrl(database = 'switchboard'): string {
    return `mysql://root@127.0.0.1:${this.port}/${database}`;
  }

  async dispose(): Promise<void> {
    await this.kill();
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
