import { expect } from 'chai';
import pino from 'pino';
import { createLocks } from '../src/locks';
import { Scheduler } from '../src/scheduler';
import type { RecurringTask } from '../src/plugin/types';
import { waitFor } from '../src/testing';

const logger = pino({ level: 'silent' });
const at = (iso: string) => new Date(`2026-05-01T${iso}Z`);

describe('scheduler', () => {
  const task = (name: string, cron: string, runs: string[], body?: () => Promise<void>): RecurringTask => ({
    name,
    cron,
    run: async (now) => {
      runs.push(`${name}@${now.toISOString().slice(11, 19)}`);
      await body?.();
    },
  });

  it('runs each task when its cron pattern comes due between two ticks', async () => {
    const runs: string[] = [];
    const scheduler = new Scheduler({ locks: createLocks({ redis: null, prefix: 'x' }), logger });
    scheduler.register(task('every-minute', '* * * * *', runs));
    scheduler.register(task('every-five', '*/5 * * * *', runs));
    expect(await scheduler.tick(at('10:03:30'))).to.deep.equal([]);
    expect(await scheduler.tick(at('10:04:00'))).to.deep.equal(['every-minute']);
    expect(await scheduler.tick(at('10:04:30'))).to.deep.equal([]);
    expect(await scheduler.tick(at('10:05:01'))).to.deep.equal(['every-minute', 'every-five']);
    expect(runs).to.deep.equal(['every-minute@10:04:00', 'every-minute@10:05:01', 'every-five@10:05:01']);
  });

  it('lets only one of two schedulers sharing locks run tasks', async () => {
    const locks = createLocks({ redis: null, prefix: 'x' });
    const runs: string[] = [];
    const a = new Scheduler({ locks, logger });
    const b = new Scheduler({ locks, logger });
    a.register(task('job', '* * * * *', runs));
    b.register(task('job', '* * * * *', runs));
    await a.tick(at('10:00:30'));
    await b.tick(at('10:00:30'));
    expect(await a.tick(at('10:01:00'))).to.deep.equal(['job']);
    expect(await b.tick(at('10:01:00'))).to.deep.equal([]);
    expect(runs).to.have.length(1);
    await a.stop();
    expect(await b.tick(at('10:02:00'))).to.deep.equal(['job']);
  });

  it('keeps running other tasks when one throws', async () => {
    const runs: string[] = [];
    const scheduler = new Scheduler({ locks: createLocks({ redis: null, prefix: 'x' }), logger });
    scheduler.register(task('broken', '* * * * *', runs, async () => Promise.reject(new Error('boom'))));
    scheduler.register(task('fine', '* * * * *', runs));
    await scheduler.tick(at('10:00:30'));
    expect(await scheduler.tick(at('10:01:00'))).to.deep.equal(['broken', 'fine']);
    expect(await scheduler.tick(at('10:02:00'))).to.deep.equal(['broken', 'fine']);
  });

  it('skips a run while the previous run of the same task is still going', async () => {
    const runs: string[] = [];
    let release!: () => void;
    const blocked = new Promise<void>((resolve) => (release = resolve));
    const scheduler = new Scheduler({ locks: createLocks({ redis: null, prefix: 'x' }), logger });
    scheduler.register(task('slow', '* * * * *', runs, () => blocked));
    await scheduler.tick(at('10:00:30'));
    const first = scheduler.tick(at('10:01:00'));
    await waitFor(() => runs.length === 1);
    expect(await scheduler.tick(at('10:02:00'))).to.deep.equal([]);
    release();
    expect(await first).to.deep.equal(['slow']);
    expect(await scheduler.tick(at('10:03:00'))).to.deep.equal(['slow']);
    expect(runs).to.deep.equal(['slow@10:01:00', 'slow@10:03:00']);
  });

  it('refuses two tasks with one name', () => {
    const scheduler = new Scheduler({ locks: createLocks({ redis: null, prefix: 'x' }), logger });
    scheduler.register(task('same', '* * * * *', []));
    expect(() => scheduler.register(task('same', '0 * * * *', []))).to.throw('registered twice');
  });
});
