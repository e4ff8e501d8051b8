import type { Reply, RoundRobinClient } from './round-robin-client';

/** One answer of a burst, with what a rate-limit check reads. */
export interface BurstAnswer {
  status: number;
  via: number;
  limit: number;
  remaining: number;
  reset: number;
  retryAfter: string | null;
  body: any;
}

const header = (reply: Reply, name: string) => Number(reply.headers.get(name));

/**
 * `count` requests through the client (so spread over its API processes in turn), `concurrency` of them
 * in flight at a time; the answers in the order they came.
 */
export async function burst(
  client: RoundRobinClient,
  count: number,
  concurrency: number,
  request: (i: number) => { method: string; route: string; body?: unknown },
): Promise<BurstAnswer[]> {
  const answers: BurstAnswer[] = [];
  let next = 0;
  const loop = async () => {
    while (next < count) {
      const { method, route, body } = request(next++);
      const reply = await client.request(method, route, body);
      answers.push({
        status: reply.status,
        via: reply.via,
        limit: header(reply, 'X-RateLimit-Limit'),
        remaining: header(reply, 'X-RateLimit-Remaining'),
        reset: header(reply, 'X-RateLimit-Reset'),
        retryAfter: reply.headers.get('Retry-After'),
        body: reply.body,
      });
    }
  };
  await Promise.all(Array.from({ length: concurrency }, loop));
  return answers;
}
