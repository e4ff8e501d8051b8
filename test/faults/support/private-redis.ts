import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { privatePort } from '../../src/private-port';
import { ServerProcess } from './server-process';

export const REDIS_SERVER = '/usr/bin/redis-server';

/** A Redis of the test's own (port, folder, no persistence), never the machine's. */
export class PrivateRedis extends ServerProcess {
  private constructor(
    readonly dir: string,
    port: number,
  ) {
    super(
      'redis-server',
      REDIS_SERVER,
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
      port,
      path.join(dir, 'redis.log'),
    );
  }

  static async start(): Promise<PrivateRedis> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'switchboard-faults-redis-'));
    const redis = new PrivateRedis(dir, await privatePort());
    try {
      await redis.start();
    } catch (err) {
      await redis.dispose();
      throw err;
    }
    return redis;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async dispose(): Promise<void> {
    await this.kill();
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
