import { Cron } from 'croner';
import type { Logger } from 'pino';
import type { LockHandle, Locks } from '../locks/types';
import { Clock, systemClock } from '../clock';
import { isDatabaseUnavailable } from '../db/errors';
import { isRedisAway } from '../redis-away';
import { RepeatedWarning } from '../repeated-warning';

const LEADER_KEY = 'scheduler:leader';
const TASK_TTL_MS = 60_000;
/** A missed run is tried again this long after, then twice as long each time it is missed again, up to the cap. */
const CATCH_UP_FIRST_MS = 10_000;
const CATCH_UP_MAX_MS = 600_000;
/**
 * A debt falling due before the next tick (ticks come each second) is paid at this one: a debt is owed from
 * when its run ended, a few ms after its tick, so "10 s later" fell just after the tick 10 s on and waited
 * a whole second more (and a test expecting the run at that tick failed on a busy host).
 */
const DUE_WITHIN_TICK_MS = 999;

/**
 * What became of a run: done; failed (logged); not started as the previous run still goes; or not started
 * as its lock could not be taken. A failed or unstarted run is owed.
 */
type RunOutcome = 'ran' | 'failed' | 'running' | 'unstarted';

export interface ScheduledTask {
  name: string;
  /** croner pattern (5 fields, or 6 with seconds first), evaluated in UTC. */
  cron: string;
  run(now: Date): Promise<void>;
}

export interface SchedulerOptions {
  locks: Locks;
  /** The leader lock's own locks when they must reach further than `locks` (default: `locks`). */
  leaderLocks?: Locks;
  logger: Pick<Logger, 'info' | 'warn' | 'error'>;
  clock?: Clock;
  /** How long a dead leader blocks the others (default 30 s); renewed on every tick. */
  leaderTtlMs?: number;
  /** Whether the database has this release's migrations (SchemaGate): while not, this scheduler does not lead. */
  schemaReady?: () => Promise<boolean>;
}

/**
 * Runs recurring tasks by cron pattern (UTC). Across processes one scheduler is active: it holds
 * a leader lock that it renews every tick and that another scheduler takes once it lapses. Each
 * run also holds a lock of its task, so a slow run never overlaps the next one. A run that was due and
 * did not happen (the locks out of reach, as while Redis restarts, or the run failing) is owed: it is tried
 * again 10 s later, then after twice as long each time (at most 10 minutes), until it runs or its next
 * regular run comes (session 29: a monitor round due during a Redis restart waited for the next one, a
 * free round 5 minutes). A scheduler that finds another one active owes nothing.
 */
export class Scheduler {
  private readonly tasks: Array<{ task: ScheduledTask; cron: Cron }> = [];
  /** Missed runs by task name: when to try again, and the pause after that one. */
  private readonly owed = new Map<string, { at: number; pauseMs: number }>();
  /** Tasks this scheduler is running now: a tick while one runs does not catch it up. */
  private readonly inFlight = new Set<string>();
  private readonly running = new Set<Promise<unknown>>();
  private readonly locks: Locks;
  private readonly leaderLocks: Locks;
  private readonly logger: SchedulerOptions['logger'];
  private readonly clock: Clock;
  private readonly leaderTtlMs: number;
  private readonly schemaReady: () => Promise<boolean>;
  private previous?: Date;
  private leader: LockHandle | null = null;
  /** Said once while another scheduler is the active one. */
  private toldWaiting = false;
  private leadership: Promise<boolean> = Promise.resolve(false);
  private timer?: NodeJS.Timeout;
  private readonly dependencyAway = new RepeatedWarning(10_000);
  private stopped = false;

  constructor(options: SchedulerOptions) {
    this.locks = options.locks;
    this.leaderLocks = options.leaderLocks ?? options.locks;
    this.logger = options.logger;
    this.clock = options.clock ?? systemClock;
    this.leaderTtlMs = options.leaderTtlMs ?? 30_000;
    this.schemaReady = options.schemaReady ?? (async () => true);
  }

  register(task: ScheduledTask): void {
    if (this.tasks.some((t) => t.task.name === task.name))
      throw new Error(`recurring task "${task.name}" is registered twice`);
    this.tasks.push({ task, cron: new Cron(task.cron, { timezone: 'UTC', paused: true }) });
  }

  /** Runs every task due since the previous tick and resolves with their names; the first tick only sets the starting point. */
  tick(now: Date): Promise<string[]> {
    return this.track(this.runDue(now));
  }

  /** Ticks at the start of every second until stop(). */
  start(): void {
    if (this.timer) return;
    this.stopped = false;
    const schedule = () => {
      this.timer = setTimeout(
        () => {
          if (this.stopped) return;
          this.tick(this.clock.now()).catch((err) =>
            // A database or Redis away fails every tick: one line per 10 s says so.
            isDatabaseUnavailable(err) || isRedisAway(err)
              ? this.dependencyAway.error(this.logger, {}, `scheduler tick failed: ${(err as Error).message}`)
              : this.logger.error({ err }, 'scheduler tick failed'),
          );
          schedule();
        },
        1000 - (this.clock.now().getTime() % 1000),
      );
    };
    schedule();
  }

  /** Stops ticking, waits for running tasks and hands leadership over at once. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.owed.clear();
    clearTimeout(this.timer);
    this.timer = undefined;
    await Promise.allSettled([...this.running]);
    await this.leadership.catch(() => false);
    const leader = this.leader;
    this.leader = null;
    await leader?.release().catch((err) => this.logger.warn({ err }, 'could not release the scheduler leader lock'));
  }

  private async runDue(now: Date): Promise<string[]> {
    const since = this.previous;
    this.previous = now;
    if (!since || this.stopped) return [];
    const tickClock = this.clockSince(now);
    const due = this.tasks.filter(({ cron }) => {
      const next = cron.nextRun(since);
      return next !== null && next <= now;
    });
    const catchingUp = this.tasks.filter(
      (t) =>
        !due.includes(t) &&
        !this.inFlight.has(t.task.name) &&
        (this.owed.get(t.task.name)?.at ?? Infinity) <= now.getTime() + DUE_WITHIN_TICK_MS,
    );
    let leading: boolean;
    try {
      leading = await this.holdLeadership();
    } catch (err) {
      for (const { task } of [...due, ...catchingUp]) this.owe(task.name, tickClock());
      throw err;
    }
    if (!leading) {
      this.owed.clear();
      return [];
    }
    const runs = [...due, ...catchingUp];
    const outcomes = await Promise.all(runs.map(({ task }) => this.runOwing(task, now)));
    return runs.filter((_, i) => ['ran', 'failed'].includes(outcomes[i])).map(({ task }) => task.name);
  }

  /**
   * The run, and what it leaves owed: a failed or unstarted run is owed from when it ended; a run that ran
   * pays the debt; one not started because it still runs (in another process) keeps the debt, looked at
   * again 10 s later.
   */
  private async runOwing(task: ScheduledTask, now: Date): Promise<RunOutcome> {
    if (this.inFlight.has(task.name)) {
      this.logger.warn({ task: task.name }, 'previous run still going; skipped');
      return 'running';
    }
    this.inFlight.add(task.name);
    const clock = this.clockSince(now);
    try {
      const outcome = await this.runExclusive(task, now);
      if (outcome === 'failed' || outcome === 'unstarted') this.owe(task.name, clock());
      else if (outcome === 'ran') this.owed.delete(task.name);
      else this.postpone(task.name, clock());
      return outcome;
    } finally {
      this.inFlight.delete(task.name);
    }
  }

  /** The tick's time moved on by the time passed since (ticks may be given times of another clock). */
  private clockSince(now: Date): () => Date {
    const started = performance.now();
    return () => new Date(now.getTime() + (performance.now() - started));
  }

  /** A debt whose run another process still holds: looked at again after the first pause, the pause kept. */
  private postpone(name: string, now: Date): void {
    const debt = this.owed.get(name);
    if (debt) this.owed.set(name, { ...debt, at: now.getTime() + CATCH_UP_FIRST_MS });
  }

  /** A missed run, tried again after a pause that doubles while it keeps being missed. */
  private owe(name: string, now: Date): void {
    const before = this.owed.get(name);
    const pauseMs = before ? Math.min(before.pauseMs * 2, CATCH_UP_MAX_MS) : CATCH_UP_FIRST_MS;
    this.owed.set(name, { at: now.getTime() + pauseMs, pauseMs });
  }

  /** One check at a time: two at once could each take the lock and lose track of one handle. */
  private holdLeadership(): Promise<boolean> {
    this.leadership = this.leadership.catch(() => false).then(() => this.renewLeadership());
    return this.leadership;
  }

  private async renewLeadership(): Promise<boolean> {
    if (!(await this.schemaReady())) {
      // Its tasks would write what the schema lacks: a scheduler of the release the database has leads.
      const leader = this.leader;
      this.leader = null;
      if (leader) {
        this.logger.warn('scheduler steps down: the database lacks migrations of this release');
        await leader.release().catch(() => undefined);
      }
      return false;
    }
    if (this.leader) {
      if (await this.leader.extend(this.leaderTtlMs)) return true;
      this.logger.warn('scheduler lost its leader lock');
      this.leader = null;
    }
    this.leader = await this.leaderLocks.acquire(LEADER_KEY, this.leaderTtlMs);
    if (this.leader) this.logger.info('scheduler is now the active one');
    else if (!this.toldWaiting) this.logger.info('scheduler waits: another process is the active one');
    this.toldWaiting = this.leader === null;
    return this.leader !== null;
  }

  /** What became of the run (RunOutcome). */
  private async runExclusive(task: ScheduledTask, now: Date): Promise<RunOutcome> {
    let lock: LockHandle | null;
    try {
      lock = await this.locks.acquire(`scheduler:task:${task.name}`, TASK_TTL_MS);
    } catch (err) {
      this.logger.error({ err, task: task.name }, 'could not take the lock of a recurring task');
      return 'unstarted';
    }
    if (!lock) {
      this.logger.warn({ task: task.name }, 'previous run still going; skipped');
      return 'running';
    }
    const held = lock;
    const keepAlive = setInterval(() => {
      held.extend(TASK_TTL_MS).then(
        (ok) => ok || this.logger.warn({ task: task.name }, 'recurring task lost its lock while running'),
        (err) => this.logger.warn({ err, task: task.name }, 'could not extend the lock of a recurring task'),
      );
    }, TASK_TTL_MS / 3);
    try {
      await task.run(now);
      return 'ran';
    } catch (err) {
      this.logger.error({ err, task: task.name }, 'recurring task failed');
      return 'failed';
    } finally {
      clearInterval(keepAlive);
      await held
        .release()
        .catch((err) => this.logger.warn({ err, task: task.name }, 'could not release the lock of a recurring task'));
    }
  }

  private track<T>(promise: Promise<T>): Promise<T> {
    this.running.add(promise);
    const forget = () => this.running.delete(promise);
    promise.then(forget, forget);
    return promise;
  }
}
