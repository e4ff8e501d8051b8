import v8 from 'node:v8';

/** How far V8 lets the old generation grow past what its last full collection kept: 60%. */
export const HEAP_GROWING_PERCENT = 60;

/**
 * A long-running process (serve, worker) bounds its heap's growth between full collections. A large
 * send keeps about 35 MB live, but V8, seeing collections cheap, let the old generation reach 150 MB
 * of garbage before each one: the serve process's peak RSS was 270 MB at 100,000 recipients (docs/
 * performance-history.md, send, 2026-11-26). NODE_OPTIONS that name the flag win.
 */
export function boundHeapGrowth(): void {
  if ((process.env.NODE_OPTIONS ?? '').includes('heap-growing-percent')) return;
  if (process.execArgv.some((a) => a.includes('heap-growing-percent'))) return;
  v8.setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}
