import {
  benchBackend,
  BenchOptions,
  machineCpuSeconds,
  msPer,
  peakRssMb,
  processCpuSeconds,
  smtpSink,
} from '@switchboard/core/testing';
import campaign from '../src';
import { Composer } from '../src/sending/composer';
import { api, seed } from './client';
import { rawSendRate } from './raw-send';

const TARGETS = { messages_per_second: 1000, ratio_to_raw_nodemailer: 0.7, worker_peak_rss_mb: 200, rss_growth: 0.2 };
/** The core mailer's pool: the baseline uses as many connections. */
const CONNECTIONS = 5;

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
 * --full) on MariaDB + Redis, one `switchboard worker` process, an in-test SMTP server that takes and
 * drops every mail. Messages per second from the send request (first queued) to the last mail accepted,
 * the worker's peak RSS, and nodemailer alone sending the same rendered mail to the same server.
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
  try {
    await engine.close();
    const server = await serve(env);
    try {
      const client = api([server.url], tenant.token);
      const list = (await client.post('/lists', { name: 'Everyone', code: 'everyone' })).data.id;
      const cities = ['London', 'Paris', 'Lagos', 'Lima', 'Osaka'];
      const html = newsletterHtml();
      const runs = [];
      let imported = 0;
      for (const size of sizes) {
        log(`importing up to ${size} subscribers`);
        await seed(
          client,
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
          await client.post('/messages', {
            name: `Weekly ${size}`,
            subject: 'The Acme weekly for {{first_name}}',
            content_html: html,
            from_name: 'Acme',
            from_email: 'news@acme.example',
          })
        ).data.id;
        const sender = await worker({ ...env, SMTP_URL: sink.url });
        try {
          log(`sending to ${size} recipients`);
          const before = sink.accepted;
          const workerCpu = processCpuSeconds(sender.pid);
          const sinkCpu = process.cpuUsage();
          const machine = machineCpuSeconds();
          const started = performance.now();
          await client.post(`/messages/${message}/send`, { list_ids: [list] });
          let looked = started;
          while (sink.accepted - before < size) {
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
          const workerCpuSeconds = processCpuSeconds(sender.pid) - workerCpu;
          const sinkCpuUsed = process.cpuUsage(sinkCpu);
          const machineNow = machineCpuSeconds();
          const rss = peakRssMb(sender.pid);
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
            worker_peak_rss_mb: rss,
            mail_bytes: html.length,
            // Where the CPU went: the worker, the sink (this process: also its polling), the whole machine.
            cpu_ms_per_mail: {
              worker: msPer(workerCpuSeconds, size),
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
      const composer = new Composer(
        {
          id: 1,
          subject: 'The Acme weekly for {{first_name}}',
          preheader: null,
          content_html: html,
          content_text: null,
        },
        { fromName: 'Acme', fromEmail: 'news@acme.example', replyTo: null },
      );
      const recipient = {
        id: 1,
        email: 's1@bench.example',
        first_name: 'Name1',
        last_name: null,
        company_name: null,
        phone: null,
        job_title: null,
        meta: { city: 'Paris' },
      };
      const mail = composer.compose(
        recipient,
        { unsubscribe: `${server.url}/api/campaign/unsubscribe?token=1.1.1.x` },
        '1.1.1@bench.example',
      );
      const sinkBefore = process.cpuUsage();
      const raw = await rawSendRate(sink.url, mail, baselineMails, CONNECTIONS);
      const sinkUsed = process.cpuUsage(sinkBefore);
      const baseline = { ...raw, sink_cpu_ms_per_mail: msPer((sinkUsed.user + sinkUsed.system) / 1e6, baselineMails) };
      const first = runs[0];
      const ratio = Number((first.messages_per_second / raw.per_second).toFixed(2));
      const growth =
        runs.length > 1
          ? Number((runs[runs.length - 1].worker_peak_rss_mb / first.worker_peak_rss_mb - 1).toFixed(2))
          : null;
      return {
        name: 'send',
        database: 'mariadb',
        connections: CONNECTIONS,
        runs,
        baseline: { raw_nodemailer: baseline },
        ratio_to_raw_nodemailer: ratio,
        worker_rss_growth: growth,
        targets: TARGETS,
        met: {
          messages_per_second: runs.every((r) => r.messages_per_second >= TARGETS.messages_per_second),
          ratio_to_raw_nodemailer: ratio >= TARGETS.ratio_to_raw_nodemailer,
          worker_peak_rss_mb: runs.every((r) => r.worker_peak_rss_mb <= TARGETS.worker_peak_rss_mb),
          rss_growth: growth === null ? null : Math.abs(growth) <= TARGETS.rss_growth,
        },
      };
    } finally {
      await server.stop();
    }
  } finally {
    await backend.dispose();
    await sink.close();
  }
}
