import { burst, BurstAnswer } from './burst';
import type { RoundRobinClient } from './round-robin-client';

/** A campaign policy's per-token buckets (config/switchboard.json, `rateLimits.perToken`). */
export interface PerToken {
  overall: number;
  GET: number;
  POST: number;
  DELETE: number;
}

/** One method's requests, more than its bucket allows, and what came back. */
export interface RatePhase {
  method: string;
  sent: number;
  /** What the limit lets through: the method's bucket, or what the overall bucket has left. */
  accepted: number;
  /** The bucket the headers report. */
  limit: number;
  /** When the reported bucket's window began (its first request). */
  windowStart: number;
  answers: BurstAnswer[];
}

/**
 * One token's requests on the campaign API (a fresh token: its windows begin here), spread over the
 * client's API processes: for each bucket, more requests than it allows, one method after another. GET,
 * POST and DELETE each have their own bucket; PUT has only the overall one, which every earlier request
 * counted, refused or not.
 */
export async function rateLimitPhases(
  client: RoundRobinClient,
  perToken: PerToken,
  concurrency: number,
): Promise<RatePhase[]> {
  const phases: RatePhase[] = [];
  const run = async (
    method: string,
    sent: number,
    accepted: number,
    limit: number,
    request: (i: number) => { route: string; body?: unknown },
    windowStart?: number,
  ) => {
    const startedAt = Date.now();
    const answers = await burst(client, sent, concurrency, (i) => ({ method, ...request(i) }));
    phases.push({ method, sent, accepted, limit, windowStart: windowStart ?? startedAt, answers });
    return answers;
  };
  await run('GET', perToken.GET + 100, perToken.GET, perToken.GET, () => ({ route: '/lists' }));
  const posts = await run('POST', perToken.POST + 50, perToken.POST, perToken.POST, (i) => ({
    route: '/lists',
    body: { name: `Limited ${i}`, code: `limited-${i}` },
  }));
  const created = posts
    .filter((a) => a.status >= 200 && a.status < 300)
    .map((a) => a.body.data.id as number)
    .sort((a, b) => a - b);
  // Lists that the DELETEs never touch, for the PUTs.
  const deletable = created.slice(0, perToken.DELETE + 10);
  const kept = created.slice(perToken.DELETE + 10);
  await run('DELETE', deletable.length, perToken.DELETE, perToken.DELETE, (i) => ({
    route: `/lists/${deletable[i]}`,
  }));
  const left = perToken.overall - phases.reduce((n, p) => n + p.sent, 0);
  await run(
    'PUT',
    left + 60,
    left,
    perToken.overall,
    (i) => ({ route: `/lists/${kept[i % kept.length]}`, body: { name: `Renamed ${i}` } }),
    phases[0].windowStart,
  );
  return phases;
}
