const POLL_EVERY_MS = 15;

const percentile = (sorted: number[], q: number) =>
  Number(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))].toFixed(1));

export interface HealthLatency {
  samples: number;
  p50_ms: number;
  p99_ms: number;
  max_ms: number;
  /**
   * The server's own longest event-loop delay over the same time (Node's monitorEventLoopDelay as
   * /metrics reports it, reset by each read), or null when /metrics is closed: /health also waits when the
   * machine's two cores are busy elsewhere, this only when the loop is.
   */
  event_loop_delay_max_ms: number | null;
}

/** The `nodejs_eventloop_lag_max_seconds` of /metrics in ms (the read resets it), or null. */
async function eventLoopDelayMax(url: string): Promise<number | null> {
  const res = await fetch(`${url}/metrics`);
  const text = await res.text();
  const line = res.ok ? /^\w*nodejs_eventloop_lag_max_seconds(?:\{[^}]*\})? (\S+)$/m.exec(text) : null;
  return line ? Number((Number(line[1]) * 1000).toFixed(1)) : null;
}

/**
 * GET /health every `everyMs` until `stop()`: each answer's latency. A server whose event loop is held
 * answers late, so the maximum is the longest the loop was blocked (plus one request's own time).
 */
export function pollHealth(url: string, everyMs = POLL_EVERY_MS) {
  const samples: number[] = [];
  let running = true;
  const done = (async () => {
    await eventLoopDelayMax(url);
    while (running) {
      const started = performance.now();
      try {
        const res = await fetch(`${url}/health`);
        await res.arrayBuffer();
      } catch {
        break; // the server is stopping
      }
      samples.push(performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  })();
  return {
    async stop(): Promise<HealthLatency> {
      running = false;
      await done;
      const sorted = [...samples].sort((a, b) => a - b);
      return {
        samples: sorted.length,
        p50_ms: percentile(sorted, 0.5),
        p99_ms: percentile(sorted, 0.99),
        max_ms: percentile(sorted, 1),
        event_loop_delay_max_ms: await eventLoopDelayMax(url),
      };
    },
  };
}
