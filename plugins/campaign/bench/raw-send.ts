import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import nodemailer from 'nodemailer';
import type { SendMailOptions } from 'nodemailer';

/** Mails handed to nodemailer at once: as many as a worker has in flight (4 ranges of 50 claims). */
const IN_FLIGHT = 200;

/**
 * The send benchmark's baseline: nodemailer alone, in a process of its own like the worker, sending one
 * rendered mail (as core hands it to nodemailer) `count` times to the sink through a pool of `connections`, `IN_FLIGHT` at a time.
 */
export async function rawSendRate(
  smtpUrl: string,
  mail: SendMailOptions,
  count: number,
  connections: number,
): Promise<{ per_second: number; elapsed_s: number; cpu_ms_per_mail: number }> {
  const file = path.join(os.tmpdir(), `switchboard-raw-send-${process.pid}.json`);
  fs.writeFileSync(file, JSON.stringify(mail));
  try {
    const out = await new Promise<string>((resolve, reject) => {
      const child = spawn(
        process.execPath,
        [__filename, '--child', smtpUrl, String(count), String(connections), file],
        {
          stdio: ['ignore', 'pipe', 'inherit'],
        },
      );
      let text = '';
      child.stdout!.on('data', (c) => (text += c));
      child.on('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(`raw send exited ${code}`))));
    });
    const { elapsed_ms: elapsedMs, cpu_ms: cpuMs } = JSON.parse(out.trim()) as { elapsed_ms: number; cpu_ms: number };
    return {
      per_second: Math.round(count / (elapsedMs / 1000)),
      elapsed_s: Number((elapsedMs / 1000).toFixed(1)),
      cpu_ms_per_mail: Number((cpuMs / count).toFixed(2)),
    };
  } finally {
    fs.rmSync(file, { force: true });
  }
}

async function child([url, count, connections, file]: string[]): Promise<void> {
  const mail = JSON.parse(fs.readFileSync(file, 'utf8')) as SendMailOptions;
  const transport = nodemailer.createTransport({
    url,
    pool: true,
    maxConnections: Number(connections),
    maxMessages: Infinity,
  } as never);
  const started = performance.now();
  const cpu = process.cpuUsage();
  let next = 0;
  const sender = async () => {
    while (next < Number(count)) {
      next++;
      await transport.sendMail(mail);
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, sender));
  const used = process.cpuUsage(cpu);
  const cpuMs = (used.user + used.system) / 1000;
  process.stdout.write(`${JSON.stringify({ elapsed_ms: performance.now() - started, cpu_ms: cpuMs })}\n`);
  transport.close();
}

if (process.argv[2] === '--child') {
  child(process.argv.slice(3)).catch((err) => {
    process.stderr.write(`${(err as Error).stack}\n`);
    process.exit(1);
  });
}
