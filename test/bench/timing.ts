/** p50/p95 of request latencies measured one after another. */
export async function timeRequests(run: () => Promise<void>, count: number): Promise<{ p50_ms: number; p95_ms: number }> {
  const samples: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    await run();
    samples.push(performance.now() - started);
  }
  samples.sort((a, b) => a - b);
  const at = (q: number) => Number(samples[Math.min(samples.length - 1, Math.floor(q * samples.length))].toFixed(2));
  return { p50_ms: at(0.5), p95_ms: at(0.95) };
}
