/** One request of a client that keeps writing: when it started, how long it took, what came back. */
export interface Answer {
  key: string;
  startedAt: number;
  ms: number;
  /** The HTTP status, or 0 when no answer came (refused, reset, or no answer within the client's patience). */
  status: number;
  /** The error envelope's code, when the answer was one. */
  code?: string;
  /** The Retry-After header, when the answer had one. */
  retryAfter?: string;
}

export type Send = (key: string, signal: AbortSignal) => Promise<Response>;

/**
 * Clients that each send one request after another (each waits for its answer) until stopped, and
 * record every answer. A request is given `patienceMs`: past it, it counts as a hang (status 0).
 */
export class RequestRecorder {
  readonly answers: Answer[] = [];
  private running = true;
  private readonly loops: Promise<void>[] = [];
  private next = 0;

  constructor(
    private readonly send: Send,
    private readonly patienceMs: number,
    clients = 2,
  ) {
    for (let i = 0; i < clients; i++) this.loops.push(this.loop());
  }

  private async loop(): Promise<void> {
    while (this.running) {
      const key = String(this.next++);
      const startedAt = Date.now();
      const answer: Answer = { key, startedAt, ms: 0, status: 0 };
      try {
        const res = await this.send(key, AbortSignal.timeout(this.patienceMs));
        answer.status = res.status;
        answer.retryAfter = res.headers.get('retry-after') ?? undefined;
        const body = (await res.json().catch(() => null)) as { error?: { code?: string } } | null;
        answer.code = body?.error?.code;
      } catch {
        answer.status = 0;
      }
      answer.ms = Date.now() - startedAt;
      this.answers.push(answer);
    }
  }

  async stop(): Promise<Answer[]> {
    this.running = false;
    await Promise.all(this.loops);
    return this.answers;
  }

  /** The answers to requests sent between `from` and `to` (epoch ms). */
  sentBetween(from: number, to: number): Answer[] {
    return this.answers.filter((a) => a.startedAt >= from && a.startedAt < to);
  }

  acknowledged(): Answer[] {
    return this.answers.filter((a) => a.status >= 200 && a.status < 300);
  }
}
