import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  benchBackend,
  BenchOptions,
  machineCpuSeconds,
  msPer,
  peakRssMb,
  processCpuSeconds,
  smtpSink,
} from '@switchboard/core/testing';
import { nodemailerMail } from '@switchboard/core';
import campaign from '../src';
import { BUILT_IN_PROVIDERS, loadProviderAdapters } from '../src/events';
import { Composer } from '../src/sending/composer';
import { api, seed } from './client';
import { rawSendRate } from './raw-send';

const TARGETS = {
  messages_per_second: 1000,
  ratio_to_raw_nodemailer: 0.9,
  sender_peak_rss_mb: 200,
  rss_growth: 0.2,
};
/** SMTP connections of the engine's pool (config `mail.maxConnections`) and of the baseline's alike. */
const CONNECTIONS = Number(process.env.BENCH_SEND_CONNECTIONS ?? 5);
/**
 * Who sends: `serve`, one `switchboard serve` with its workers and scheduler (the embedded default's
 * shape: the send request, the ranges and the watchdog in one process); `split`, a `switchboard
 * worker` beside an API-only serve.
 */
const SHAPE = process.env.BENCH_SEND_SHAPE === 'split' ? 'split' : 'serve';

/** A config file like the repository's, with the pool of CONNECTIONS. */
function configWithConnections(): string {
  const file = path.join(os.tmpdir(), `switchboard-send-bench-${process.pid}.json`);
  const config = JSON.parse(fs.readFileSync(path.resolve('config/switchboard.json'), 'utf8'));
  fs.writeFileSync(file, JSON.stringify({ ...config, mail: { ...config.mail, maxConnections: CONNECTIONS } }));
  return file;
}

/** About 5 KB of HTML with merge tags and links, like a newsletter. */
function newsletterHtml(): string {
  const story = (i: number) =>
    `<h2>Story ${i}: what changed this week</h2><p>Hello {{ first_name | "there" }}, here is what we shipped for ` +
    `{{meta.city}} and everywhere else. We rewrote the importer, made search faster and fixed the things you ` +
    `told us about. <a href="https://acme.example/stories/${i}?utm_source=newsletter&amp;utm_medium=email">Read ` +
    `the whole story</a> or <a href="https://acme.example/feedback?story=${i}">tell us what you think</a>.</p>`;
  return (
    `<html><body><h1>The Acme weekly</h1>${Array.from({ length: 10 }, (_, i) => story(i + 1)).join('')}` +
    `<p><a href="{{unsubscribe_url}}">Unsubscribe</a></p></body></html>`
  );
}

/**
 * `npm run bench -- send`: a campaign to 100,000 recipients (10,000 with --quick; also 500,000 with
 * --full) on MariaDB + Redis, sent by one `switchboard serve` doing everything (BENCH_SEND_SHAPE=split:
 * a `switchboard worker`), an in-test SMTP server that takes and drops every mail. Messages per second
 * from the send request (first queued) to the last mail accepted, the sending process's peak RSS, and
 * nodemailer alone sending the same mail to the same server through as many connections.
 */
export async function sendBenchmark({
  quick,
  full,
  log,
  serve,
  worker,
}: BenchOptions): Promise<Record<string, unknown>> {
  const sizes = quick ? [10_000] : full ? [100_000, 500_000] : [100_000];
  const sink = await smtpSink({ discard: true });
  const { backend, engine, tenant, env } = await benchBackend([campaign]);
  const configFile = configWithConnections();
  try {
    await engine.close();
    // The import's API: a process of its own, so the sender's peak RSS is that of the send alone.
    const server = await serve(env);
    try {
      const importer = api([server.url], tenant.token);
      const list = (await importer.post('/lists', { name: 'Everyone', code: 'everyone' })).data.id;
      const cities = ['London', 'Paris', 'Lagos', 'Lima', 'Osaka'];
      const html = newsletterHtml();
      const runs = [];
      let imported = 0;
      for (const size of sizes) {
        log(`importing up to ${size} subscribers`);
        await seed(
          importer,
          imported,
          size,
          (n) => ({
            email: `s${n}@bench.example`,
            first_name: `Name${n}`,
            lists: [list],
            meta_data: { city: cities[n % 5] },
          }),
          log,
        );
        imported = size;
        const message = (
          await importer.post('/messages', {
            name: `Weekly ${size}`,
            subject: 'The Acme weekly for {{first_name}}',
            content_html: html,
            from_name: 'Acme',
            from_email: 'news@acme.example',
          })
        ).data.id;
        const sendEnv = { ...env, SMTP_URL: sink.url, SWITCHBOARD_CONFIG: configFile };
        const sender =
          SHAPE === 'serve'
            ? await serve(sendEnv, { everything: true })
            : { url: server.url, ...(await worker(sendEnv)) };
        try {
          const client = api([sender.url], tenant.token);
          log(`sending to ${size} recipients (${SHAPE})`);
          const before = { accepted: sink.accepted, bytes: sink.bytes };
          sink.peakConnections = sink.connections;
          const senderCpu = processCpuSeconds(sender.pid);
          const sinkCpu = process.cpuUsage();
          const machine = machineCpuSeconds();
          const started = performance.now();
          await client.post(`/messages/${message}/send`, { list_ids: [list] });
          let looked = started;
          while (sink.accepted - before.accepted < size) {
            if (performance.now() - started > 30 * 60_000) throw new Error(`send of ${size} did not finish`);
            await new Promise((resolve) => setTimeout(resolve, 20));
            // A send that paused (its failure rate) will not finish: say why instead of waiting.
            if (performance.now() - looked > 2000) {
              looked = performance.now();
              const { status, delivery } = (await client.get(`/messages/${message}`)).data;
              if (delivery?.status === 'paused' || status === 'paused')
                throw new Error(`send of ${size} paused: ${JSON.stringify(delivery)}`);
            }
          }
          const seconds = (performance.now() - started) / 1000;
          const senderCpuSeconds = processCpuSeconds(sender.pid) - senderCpu;
          const sinkCpuUsed = process.cpuUsage(sinkCpu);
          const machineNow = machineCpuSeconds();
          const rss = peakRssMb(sender.pid);
          const mailBytes = Math.round((sink.bytes - before.bytes) / (sink.accepted - before.accepted));
          const connections = sink.peakConnections;
          let stats = (await client.get(`/messages/${message}`)).data;
          for (let i = 0; stats.status !== 'sent' && i < 100; i++) {
            await new Promise((resolve) => setTimeout(resolve, 100));
            stats = (await client.get(`/messages/${message}`)).data;
          }
          if (stats.status !== 'sent' || stats.stats.sent !== size)
            throw new Error(`message ${message}: ${stats.status}, ${stats.stats.sent} sent of ${size}`);
          runs.push({
            recipients: size,
            messages_per_second: Math.round(size / seconds),
            elapsed_s: Number(seconds.toFixed(1)),
            sender_peak_rss_mb: rss,
            html_bytes: html.length,
            mail_bytes: mailBytes,
            smtp_connections: connections,
            // Where the CPU went: the sender, the sink (this process: also its polling), the whole machine.
            cpu_ms_per_mail: {
              sender: msPer(senderCpuSeconds, size),
              sink: msPer((sinkCpuUsed.user + sinkCpuUsed.system) / 1e6, size),
              machine: msPer(machineNow.busy - machine.busy, size),
            },
            machine_busy_share: Number(
              ((machineNow.busy - machine.busy) / (machineNow.total - machine.total)).toFixed(2),
            ),
          });
        } finally {
          await sender.stop();
        }
      }

      // A rate: 20,000 mails measure it as well as 100,000.
      const baselineMails = Math.min(sizes[0], 20_000);
      log(`measuring the baseline: nodemailer alone, ${baselineMails} mails`);
      // The mail the engine sends: the same composer, the enabled providers' headers, headers as core writes them.
      const providers = loadProviderAdapters(BUILT_IN_PROVIDERS);
      const composer = new Composer(
        {
          id: 1,
          subject: 'The Acme weekly for {{first_name}}',
          preheader: null,
          content_html: html,
          content_text: null,
        },
        { fromName: 'Acme', fromEmail: 'news@acme.example', replyTo: null },
        { providerHeaders: (ids) => providers.outgoingHeaders(ids) },
      );
      const recipient = {
        id: 12345,
        email: 's12345@bench.example',
        first_name: 'Name12345',
        last_name: null,
        company_name: null,
        phone: null,
        job_title: null,
        meta: { city: 'Paris' },
      };
      const mail = composer.compose(
        recipient,
        { unsubscribe: `${server.url}/api/campaign/unsubscribe?token=1.1.12345.xxxxxxxxxxxxxxxxxxxxxx` },
        `1.12345.1@127.0.0.1`,
      );
      const sinkBefore = process.cpuUsage();
      const bytesBefore = { accepted: sink.accepted, bytes: sink.bytes };
      sink.peakConnections = sink.connections;
      const raw = await rawSendRate(sink.url, nodemailerMail(mail, []), baselineMails, CONNECTIONS);
      const sinkUsed = process.cpuUsage(sinkBefore);
      const baseline = {
        ...raw,
        mail_bytes: Math.round((sink.bytes - bytesBefore.bytes) / (sink.accepted - bytesBefore.accepted)),
        smtp_connections: sink.peakConnections,
        sink_cpu_ms_per_mail: msPer((sinkUsed.user + sinkUsed.system) / 1e6, baselineMails),
      };
      const first = runs[0];
      const ratio = Number((first.messages_per_second / raw.per_second).toFixed(2));
      const growth =
        runs.length > 1
          ? Number((runs[runs.length - 1].sender_peak_rss_mb / first.sender_peak_rss_mb - 1).toFixed(2))
          : null;
      return {
        name: 'send',
        database: 'mariadb',
        shape: SHAPE,
        connections: CONNECTIONS,
        runs,
        baseline: { raw_nodemailer: baseline },
        ratio_to_raw_nodemailer: ratio,
        sender_rss_growth: growth,
        targets: TARGETS,
        met: {
          messages_per_second: runs.every((r) => r.messages_per_second >= TARGETS.messages_per_second),
          ratio_to_raw_nodemailer: ratio >= TARGETS.ratio_to_raw_nodemailer,
          sender_peak_rss_mb: runs.every((r) => r.sender_peak_rss_mb <= TARGETS.sender_peak_rss_mb),
          rss_growth: growth === null ? null : Math.abs(growth) <= TARGETS.rss_growth,
        },
      };
    } finally {
      await server.stop();
    }
  } finally {
    fs.rmSync(configFile, { force: true });
    await backend.dispose();
    await sink.close();
  }
}
