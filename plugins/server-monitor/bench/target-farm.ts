import http from 'node:http';

/** When each server (`?s=<n>` of its URL) was asked, ms since the epoch: what the monitored side saw. */
const asked = new Map<number, number[]>();

/**
 * Per window of `window` ms from `from` (`windows` of them), how many of the servers `lo` to `hi - 1`
 * were asked at least once within it.
 */
function seen(query: URLSearchParams): number[] {
  const [from, window, windows, lo, hi] = ['from', 'window', 'windows', 'lo', 'hi'].map((k) => Number(query.get(k)));
  const counts = new Array<number>(windows).fill(0);
  for (let s = lo; s < hi; s++) {
    const hit = new Set<number>();
    for (const at of asked.get(s) ?? []) {
      const k = Math.floor((at - from) / window);
      if (k >= 0 && k < windows) hit.add(k);
    }
    for (const k of hit) counts[k]++;
  }
  return counts;
}

/**
 * The monitor benchmark's servers to check, as a process of its own on loopback: `/t/<ms>/<status>?s=<n>`
 * answers that status after that many milliseconds and notes when server n was asked; `/seen?...` answers
 * the counts of `seen`.
 */
const server = http.createServer((req, res) => {
  const at = Date.now();
  const url = new URL(req.url ?? '/', 'http://farm');
  if (url.pathname === '/seen') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(seen(url.searchParams)));
    return;
  }
  const s = url.searchParams.get('s');
  if (s !== null) {
    const times = asked.get(Number(s));
    if (times) times.push(at);
    else asked.set(Number(s), [at]);
  }
  const [, , ms, status] = url.pathname.split('/');
  setTimeout(
    () => {
      res.writeHead(Number(status) || 200, { 'content-type': 'text/plain' });
      res.end('ok\n');
    },
    Number(ms) || 0,
  );
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.env.PORT), '127.0.0.1');
process.once('SIGTERM', () => {
  server.closeAllConnections();
  server.close();
});
