import { expect } from 'chai';
import { createLocks } from '../src/locks';
import { Scheduler, ScheduledTask, SchedulerOptions } from '../src/scheduler';
import type { Locks } from '../src/locks/types';
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

  it('steps down while the database lacks migrations of its release, leading again once it has them', async () => {
    const locks = createLocks({ prefix: 'x' });
    const runs: string[] = [];
    let migrated = true;
    const newer = scheduler({ locks, schemaReady: async () => migrated });
    const older = scheduler({ locks });
    newer.register(task('new', '* * * * *', runs));
    older.register(task('old', '* * * * *', runs));
    await newer.tick(at('10:00:30'));
    await older.tick(at('10:00:30'));
    expect(await newer.tick(at('10:01:00'))).to.deep.equal(['new']);
    // Rolled back: the newer release's scheduler runs nothing and lets the lock go at its next tick.
    migrated = false;
    expect(await newer.tick(at('10:02:00'))).to.deep.equal([]);
    expect(await older.tick(at('10:02:00'))).to.deep.equal(['old']);
    migrated = true;
    expect(await newer.tick(at('10:03:00'))).to.deep.equal([]);
    await older.stop();
    expect(await newer.tick(at('10:04:00'))).to.deep.equal(['new']);
    expect(runs).to.deep.equal(['new@10:01:00', 'old@10:02:00', 'new@10:04:00']);
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

  it('runs a run missed while the locks were out of reach 10 s later, once; a failing run again after 10, 20, 40 s', async () => {
    const runs: string[] = [];
    const real = createLocks({ prefix: 'x' });
    let away = false;
    // Redis gone: every lock call fails, the leader lock's renewal too.
    const flaky: Locks = {
      acquire: async (key, ttlMs) => {
        if (away) throw new Error('redis for locks does not answer');
        const handle = await real.acquire(key, ttlMs);
        return (
          handle && {
            key: handle.key,
            release: () => handle.release(),
            extend: async (ms: number) => {
              if (away) throw new Error('redis for locks does not answer');
              return handle.extend(ms);
            },
          }
        );
      },
      close: () => real.close(),
    };
    let failures = 0;
    const s = scheduler({ locks: flaky });
    s.register(task('round', '* * * * *', runs));
    s.register(
      task('flaky', '0 0 * * *', runs, async () => (failures-- > 0 ? Promise.reject(new Error('boom')) : undefined)),
    );
    await s.tick(at('10:00:30'));
    away = true;
    await s.tick(at('10:01:00')).then(
      () => expect.fail('the tick should fail while the locks are away'),
      (err: Error) => expect(err.message).to.contain('does not answer'),
    );
    away = false;
    expect(await s.tick(at('10:01:05')), 'not before 10 s').to.deep.equal([]);
    expect(await s.tick(at('10:01:10'))).to.deep.equal(['round']);
    expect(await s.tick(at('10:01:30')), 'owed no more').to.deep.equal([]);
    expect(await s.tick(at('10:02:00'))).to.deep.equal(['round']);
    expect(runs).to.deep.equal(['round@10:01:10', 'round@10:02:00']);

    // A daily run that fails is tried again after 10 s, then 20 s, then 40 s, until it runs.
    runs.length = 0;
    failures = 3;
    await s.tick(at('23:59:59'));
    for (const [time, ran] of [
      ['00:00:00', true],
      ['00:00:09', false],
      ['00:00:10', true],
      ['00:00:29', false],
      ['00:00:30', true],
      ['00:01:09', false],
      ['00:01:10', true],
      ['00:01:30', false],
      ['00:05:00', false],
    ] as const)
      expect((await s.tick(new Date(`2026-05-02T${time}Z`))).includes('flaky'), time).to.equal(ran);
    expect(runs.filter((r) => r.startsWith('flaky'))).to.deep.equal([
      'flaky@00:00:00',
      'flaky@00:00:10',
      'flaky@00:00:30',
      'flaky@00:01:10',
    ]);
  });

  it('does not catch up a run still going: a slow failing catch-up keeps its doubled pause', async () => {
    const runs: string[] = [];
    let finish: ((err?: Error) => void) | null = null;
    let slow = false;
    const s = scheduler();
    s.register(
      task('daily', '0 0 * * *', runs, () =>
        slow
          ? new Promise<void>((resolve, reject) => (finish = (err) => (err ? reject(err) : resolve())))
          : Promise.reject(new Error('boom')),
      ),
    );
    const tick = (time: string) => s.tick(new Date(`2026-05-02T${time}Z`));
    await s.tick(at('23:59:59'));
    expect(await tick('00:00:00')).to.deep.equal(['daily']);
    slow = true;
    const catchUp = tick('00:00:10');
    await waitFor(() => finish !== null);
    expect(await tick('00:00:11'), 'still going: not run again').to.deep.equal([]);
    finish!(new Error('boom again'));
    expect(await catchUp).to.deep.equal(['daily']);
    slow = false;
    expect(await tick('00:00:29'), 'the pause doubled to 20 s').to.deep.equal([]);
    expect(await tick('00:00:31')).to.deep.equal(['daily']);
    expect(runs).to.deep.equal(['daily@00:00:00', 'daily@00:00:10', 'daily@00:00:31']);
  });

  it('looks at a debt whose run another process holds 10 s later, not at every tick', async () => {
    const runs: string[] = [];
    const locks = createLocks({ prefix: 'x' });
    let failing = true;
    const s = scheduler({ locks });
    s.register(task('daily', '0 0 * * *', runs, async () => (failing ? Promise.reject(new Error('boom')) : undefined)));
    const tick = (time: string) => s.tick(new Date(`2026-05-02T${time}Z`));
    await s.tick(at('23:59:59'));
    expect(await tick('00:00:00')).to.deep.equal(['daily']);
    failing = false;
    // Another process runs it (it holds the task's lock) when the debt comes due.
    const other = await locks.acquire('scheduler:task:daily', 60_000);
    expect(await tick('00:00:10')).to.deep.equal([]);
    await other!.release();
    expect(await tick('00:00:11'), 'not looked at again before 10 s').to.deep.equal([]);
    expect(await tick('00:00:21')).to.deep.equal(['daily']);
    expect(runs).to.deep.equal(['daily@00:00:00', 'daily@00:00:21']);
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
