import http from 'node:http';

/**
 * The monitor benchmark's servers to check, as a process of its own on loopback: `/t/<ms>/<status>`
 * answers that status after that many milliseconds.
 */
const server = http.createServer((req, res) => {
  const [, , ms, status] = (req.url ?? '').split(/[/?]/);
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
