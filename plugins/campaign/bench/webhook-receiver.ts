import http from 'node:http';

/**
 * The webhooks benchmark's receiver, as its own process: answers every POST 204, or 500 to a random
 * FAIL_RATE of them, and keeps the `webhook-id`s it answered 2xx to (its dedupe log), counting an id
 * answered 2xx twice. GET answers what it counted.
 */
const failRate = Number(process.env.FAIL_RATE ?? 0);
const accepted = new Set<string>();
let requests = 0;
let refused = 0;
let duplicates = 0;

const server = http.createServer((req, res) => {
  if (req.method === 'GET') {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ requests, refused, accepted: accepted.size, duplicates }));
    return;
  }
  req.resume();
  req.on('end', () => {
    requests++;
    if (Math.random() < failRate) {
      refused++;
      res.statusCode = 500;
      res.end();
      return;
    }
    const id = String(req.headers['webhook-id']);
    if (accepted.has(id)) duplicates++;
    else accepted.add(id);
    res.statusCode = 204;
    res.end();
  });
});
server.keepAliveTimeout = 30_000;
server.listen(Number(process.env.PORT), '127.0.0.1');
process.once('SIGTERM', () => server.close());
