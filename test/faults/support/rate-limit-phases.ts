import { burst, BurstAnswer } from './burst';
import type { RoundRobinClient } from './round-robin-client';

/** A plugin's rate-limit policy (config/switchboard.json, `plugins.<id>.rateLimits`). */
export interface Policy {
  windowSeconds: number;
  perToken: { overall: number; GET?: number; POST?: number; DELETE?: number };
  perAddress: number;
}

/** One kind of request, more of it than its bucket allows, and what came back. */
export interface RatePhase {
  name: string;
  sent: number;
  /** How many the limit lets through: the bucket's size, or what the overall bucket has left. */
  passes: number;
  /** What a request let through is answered (2xx; 401 for one without a valid token). */
  passed(status: number): boolean;
  /** The bucket the headers report. */
  limit: number;
  windowSeconds: number;
  /** When the reported bucket's window began (its first request). */
  windowStart: number;
  answers: BurstAnswer[];
}

const isOk = (status: number) => status >= 200 && status < 300;

type Request = (i: number) => { method: string; route: string; body?: unknown };

async function phase(
  client: RoundRobinClient,
  concurrency: number,
  spec: Omit<RatePhase, 'answers' | 'windowStart' | 'passed'> & { windowStart?: number; passed?: RatePhase['passed'] },
  request: Request,
): Promise<RatePhase> {
  const startedAt = Date.now();
  const answers = await burst(client, spec.sent, concurrency, request);
  return { passed: isOk, ...spec, windowStart: spec.windowStart ?? startedAt, answers };
}

/**
 * One token's requests on the campaign API (a fresh token: its windows begin here), spread over the
 * client's API processes: for each bucket, more requests than it allows, one method after another. GET,
 * POST and DELETE each have their own bucket; PUT has only the overall one, which every earlier request
 * counted, refused or not. Then requests without a valid token: the per-address bucket.
 */
export async function campaignPhases(
  client: RoundRobinClient,
  anonymous: RoundRobinClient,
  policy: Policy,
  concurrency: number,
): Promise<RatePhase[]> {
  const { perToken, windowSeconds } = policy;
  const [GET, POST, DELETE] = [perToken.GET!, perToken.POST!, perToken.DELETE!];
  const phases: RatePhase[] = [];
  const run = async (spec: Parameters<typeof phase>[2], request: Request) => {
    const done = await phase(client, concurrency, spec, request);
    phases.push(done);
    return done.answers;
  };
  await run({ name: 'GET', sent: GET + 100, passes: GET, limit: GET, windowSeconds }, () => ({
    method: 'GET',
    route: '/lists',
  }));
  const posts = await run({ name: 'POST', sent: POST + 50, passes: POST, limit: POST, windowSeconds }, (i) => ({
    method: 'POST',
    route: '/lists',
    body: { name: `Limited ${i}`, code: `limited-${i}` },
  }));
  const created = posts
    .filter((a) => isOk(a.status))
    .map((a) => a.body.data.id as number)
    .sort((a, b) => a - b);
  // Lists that the DELETEs never touch, for the PUTs.
  const deletable = created.slice(0, DELETE + 10);
  const kept = created.slice(DELETE + 10);
  await run({ name: 'DELETE', sent: deletable.length, passes: DELETE, limit: DELETE, windowSeconds }, (i) => ({
    method: 'DELETE',
    route: `/lists/${deletable[i]}`,
  }));
  const left = perToken.overall - phases.reduce((n, p) => n + p.sent, 0);
  await run(
    {
      name: 'PUT (overall)',
      sent: left + 60,
      passes: left,
      limit: perToken.overall,
      windowSeconds,
      windowStart: phases[0].windowStart,
    },
    (i) => ({ method: 'PUT', route: `/lists/${kept[i % kept.length]}`, body: { name: `Renamed ${i}` } }),
  );
  phases.push(
    await phase(
      anonymous,
      concurrency,
      {
        name: 'no valid token (per address)',
        sent: policy.perAddress + 20,
        passes: policy.perAddress,
        passed: (status) => status === 401,
        limit: policy.perAddress,
        windowSeconds,
      },
      () => ({ method: 'GET', route: '/lists' }),
    ),
  );
  return phases;
}

/**
 * A short window seen twice: more requests than the token's overall bucket allows, then, once the
 * window has ended (its X-RateLimit-Reset), as many again: the new window lets the full limit through.
 */
export async function consecutiveWindows(
  client: RoundRobinClient,
  policy: Policy,
  concurrency: number,
  route: string,
): Promise<RatePhase[]> {
  const spec = (name: string) => ({
    name,
    sent: policy.perToken.overall + 50,
    passes: policy.perToken.overall,
    limit: policy.perToken.overall,
    windowSeconds: policy.windowSeconds,
  });
  const first = await phase(client, concurrency, spec('window 1'), () => ({ method: 'GET', route }));
  const end = Math.max(...first.answers.map((a) => a.reset)) * 1000;
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, end - Date.now())));
  const second = await phase(client, concurrency, spec('window 2'), () => ({ method: 'GET', route }));
  return [first, second];
}
