import { expect } from 'chai';
import { createLocks } from '../src/locks';
import { Scheduler, ScheduledTask, SchedulerOptions } from '../src/scheduler';
import { waitFor } from '../src/testing';

const at = (hhmmss: string) => new Date(`2026-05-01T${hhmmss}Z`);

/** Keeps what the scheduler logs as errors, drops the rest. */
function recordingLogger(): SchedulerOptions['logger'] & { errors: Array<{ task?: string; msg?: string }> } {
  const errors: Array<{ task?: string; msg?: string }> = [];
  const logger = {
    errors,
    info: () => undefined,
    warn: () => undefined,
    error: (obj: { task?: string }, msg?: string) => void errors.push({ task: obj.task, msg }),
  };
  return logger as unknown as SchedulerOptions['logger'] & { errors: typeof errors };
}

describe('scheduler', () => {
  const task = (name: string, cron: string, runs: string[], body?: () => Promise<void>): ScheduledTask => ({
    name,
    cron,
    run: async (now) => {
      runs.push(`${name}@${now.toISOString().slice(11, 19)}`);
      await body?.();
    },
  });
  const scheduler = (options: Partial<SchedulerOptions> = {}) =>
    new Scheduler({ locks: createLocks({ prefix: 'x' }), logger: recordingLogger(), ...options });

  it('runs each task when its cron pattern comes due between two ticks', async () => {
    const runs: string[] = [];
    const s = scheduler();
    s.register(task('every-minute', '* * * * *', runs));
    s.register(task('every-five', '*/5 * * * *', runs));
    s.register(task('every-ten-seconds', '*/10 * * * * *', runs));
    expect(await s.tick(at('10:03:31'))).to.deep.equal([]);
    expect(await s.tick(at('10:03:35'))).to.deep.equal([]);
    expect(await s.tick(at('10:04:00'))).to.deep.equal(['every-minute', 'every-ten-seconds']);
    expect(await s.tick(at('10:04:05'))).to.deep.equal([]);
    expect(await s.tick(at('10:05:01'))).to.deep.equal(['every-minute', 'every-five', 'every-ten-seconds']);
    expect(runs).to.deep.equal([
      'every-minute@10:04:00',
      'every-ten-seconds@10:04:00',
      'every-minute@10:05:01',
      'every-five@10:05:01',
      'every-ten-seconds@10:05:01',
    ]);
  });

  it('lets only one of two schedulers sharing locks run tasks, until it stops', async () => {
    const locks = createLocks({ prefix: 'x' });
    const runs: string[] = [];
    const a = scheduler({ locks });
    const b = scheduler({ locks });
    a.register(task('job', '* * * * *', runs));
    b.register(task('job', '* * * * *', runs));
    await a.tick(at('10:00:30'));
    await b.tick(at('10:00:30'));
    expect(await a.tick(at('10:01:00'))).to.deep.equal(['job']);
    expect(await b.tick(at('10:01:00'))).to.deep.equal([]);
    expect(await b.tick(at('10:02:00'))).to.deep.equal([]);
    expect(runs).to.deep.equal(['job@10:01:00']);
    await a.stop();
    expect(await b.tick(at('10:03:00'))).to.deep.equal(['job']);
    expect(await a.tick(at('10:04:00'))).to.deep.equal([]);
  });

  it('takes over once a leader that died lets its lock lapse', async () => {
    const locks = createLocks({ prefix: 'x' });
    const runs: string[] = [];
    const a = scheduler({ locks, leaderTtlMs: 300 });
    const b = scheduler({ locks, leaderTtlMs: 300 });
    a.register(task('job', '* * * * *', runs));
    b.register(task('job', '* * * * *', runs));
    await a.tick(at('10:00:30'));
    await b.tick(at('10:00:30'));
    const diedAt = Date.now();
    expect(await a.tick(at('10:01:00'))).to.deep.equal(['job']);
    // a never ticks again; b keeps ticking, a minute further each time.
    let minute = 2;
    await waitFor(async () => (await b.tick(at(`10:${String(minute++).padStart(2, '0')}:00`))).length > 0, 3000);
    expect(Date.now() - diedAt).to.be.at.least(250);
    expect(runs[0]).to.equal('job@10:01:00');
    expect(runs).to.have.length(2);
  });

  it('keeps running other tasks when one throws, and logs the failure', async () => {
    const runs: string[] = [];
    const logger = recordingLogger();
    const s = scheduler({ logger });
    s.register(task('broken', '* * * * *', runs, async () => Promise.reject(new Error('boom'))));
    s.register(task('fine', '* * * * *', runs));
    await s.tick(at('10:00:30'));
    expect(await s.tick(at('10:01:00'))).to.deep.equal(['broken', 'fine']);
    expect(await s.tick(at('10:02:00'))).to.deep.equal(['broken', 'fine']);
    expect(runs).to.deep.equal(['broken@10:01:00', 'fine@10:01:00', 'broken@10:02:00', 'fine@10:02:00']);
    expect(logger.errors).to.deep.equal([
      { task: 'broken', msg: 'recurring task failed' },
      { task: 'broken', msg: 'recurring task failed' },
    ]);
  });

  it('skips a run while the previous run of the same task is still going', async () => {
    const runs: string[] = [];
    let release!: () => void;
    const blocked = new Promise<void>((resolve) => (release = resolve));
    const s = scheduler();
    s.register(task('slow', '* * * * *', runs, () => blocked));
    await s.tick(at('10:00:30'));
    const first = s.tick(at('10:01:00'));
    await waitFor(() => runs.length === 1);
    expect(await s.tick(at('10:02:00'))).to.deep.equal([]);
    release();
    expect(await first).to.deep.equal(['slow']);
    expect(await s.tick(at('10:03:00'))).to.deep.equal(['slow']);
    expect(runs).to.deep.equal(['slow@10:01:00', 'slow@10:03:00']);
  });

  it('ticks on its own once started, and stop() waits for the running task', async () => {
    const runs: string[] = [];
    let release!: () => void;
    const blocked = new Promise<void>((resolve) => (release = resolve));
    let finished = false;
    const s = scheduler();
    s.register(
      task('every-second', '* * * * * *', runs, async () => {
        await blocked;
        finished = true;
      }),
    );
    s.start();
    await waitFor(() => runs.length === 1, 3000);
    let stopped = false;
    const stopping = s.stop().then(() => (stopped = true));
    await new Promise((r) => setTimeout(r, 50));
    expect(stopped).to.equal(false);
    release();
    await stopping;
    expect(finished).to.equal(true);
    expect(runs).to.have.length(1);
  });

  it('refuses two tasks with one name, and a pattern croner cannot read', () => {
    const s = scheduler();
    s.register(task('same', '* * * * *', []));
    expect(() => s.register(task('same', '0 * * * *', []))).to.throw('registered twice');
    expect(() => s.register(task('bad', 'every minute', []))).to.throw();
  });
});
