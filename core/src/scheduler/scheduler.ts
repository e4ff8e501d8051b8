import { Cron } from 'croner';
import type { Logger } from 'pino';
import type { Locks, LockHandle } from '../locks/types';
import { Clock, systemClock } from '../clock';
import type { RecurringTask } from '../plugin/types';

const LEADER_KEY = 'scheduler:leader';
const LEADER_TTL_MS = 30_000;
const TASK_TTL_MS = 60_000;

interface Registered {
  task: RecurringTask;
  cron: Cron;
}

/**
 * Runs recurring tasks by cron pattern (UTC). Across processes one scheduler is active: it holds
 * a leader lock that it renews every tick and that another scheduler takes once it lapses. Each
 * run also holds a lock of its task, so a slow run never overlaps the next one.
 */
export class Scheduler {
  private readonly tasks: Registered[] = [];
  private readonly running = new Set<Promise<unknown>>();
  private readonly locks: Locks;
  private readonly logger: Pick<Logger, 'info' | 'warn' | 'error'>;
  private readonly clock: Clock;
  private previous?: Date;
  private leader: LockHandle | null = null;
  private timer?: NodeJS.Timeout;
  private stopped = false;

  constructor(options: { locks: Locks; logger: Pick<Logger, 'info' | 'warn' | 'error'>; clock?: Clock }) {
    this.locks = options.locks;
    this.logger = options.logger;
    this.clock = options.clock ?? systemClock;
  }

  register(task: RecurringTask): void {
    if (this.tasks.some((t) => t.task.name === task.name)) throw new Error(`recurring task "${task.name}" is registered twice`);
    this.tasks.push({ task, cron: new Cron(task.cron, { timezone: 'UTC', paused: true }) });
  }

  /** Runs every task due since the previous tick; the first tick only sets the starting point. */
  async tick(now: Date): Promise<string[]> {
    const since = this.previous;
    this.previous = now;
    if (!since || !(await this.holdLeadership())) return [];
    const due = this.tasks.filter(({ cron }) => {
      const next = cron.nextRun(since);
      return next !== null && next <= now;
    });
    const ran = await Promise.all(due.map(({ task }) => this.runExclusive(task, now)));
    return due.filter((_, i) => ran[i]).map(({ task }) => task.name);
  }

  start(): void {
    this.stopped = false;
    const schedule = () => {
      if (this.stopped) return;
      const now = this.clock.now().getTime();
      this.timer = setTimeout(() => {
        const run = this.tick(this.clock.now()).catch((err) => this.logger.error({ err }, 'scheduler tick failed'));
        this.running.add(run);
        void run.finally(() => this.running.delete(run));
        schedule();
      }, 1000 - (now % 1000));
    };
    schedule();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await Promise.allSettled([...this.running]);
    await this.leader?.release();
    this.leader = null;
  }

  private async holdLeadership(): Promise<boolean> {
    if (this.leader && (await this.leader.extend(LEADER_TTL_MS))) return true;
    this.leader = await this.locks.acquire(LEADER_KEY, LEADER_TTL_MS);
    if (this.leader) this.logger.info('scheduler is now the active one');
    return this.leader !== null;
  }

  /** False when the previous run of the task still holds its lock. */
  private async runExclusive(task: RecurringTask, now: Date): Promise<boolean> {
    const lock = await this.locks.acquire(`scheduler:task:${task.name}`, TASK_TTL_MS);
    if (!lock) {
      this.logger.warn({ task: task.name }, 'previous run still going; skipped');
      return false;
    }
    const keepAlive = setInterval(() => void lock.extend(TASK_TTL_MS), TASK_TTL_MS / 3);
    try {
      await task.run(now);
    } catch (err) {
      this.logger.error({ err, task: task.name }, 'recurring task failed');
    } finally {
      clearInterval(keepAlive);
      await lock.release();
    }
    return true;
  }
}
