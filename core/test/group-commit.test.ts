import { expect } from 'chai';
import { GroupCommit } from '../src/db/group-commit';
import { waitFor } from '../src/testing';

/** A promise and the function that settles it, to hold a run in flight. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

/** Two runs at once with even runs, items weighing their length; the first run held until `first` opens. */
function evenRuns(maxWeight?: number) {
  const runs: string[][] = [];
  const first = gate();
  const group = new GroupCommit<string, number>(
    async (items) => {
      runs.push(items);
      if (runs.length === 1) await first.opened;
      return items.map((s) => s.length);
    },
    { concurrency: 2, maxWeight, weight: (s) => s.length, evenRuns: true },
  );
  return { runs, first, group };
}

describe('GroupCommit', () => {
  it('starts the first item at once and runs the items that came meanwhile together', async () => {
    const runs: number[][] = [];
    const first = gate();
    const group = new GroupCommit<number, number>(async (items) => {
      runs.push(items);
      if (runs.length === 1) await first.opened;
      return items.map((n) => n * 10);
    });
    const answers = [1, 2, 3, 4].map((n) => group.submit(n));
    expect(runs).to.deep.equal([[1]]);
    first.open();
    expect(await Promise.all(answers)).to.deep.equal([10, 20, 30, 40]);
    expect(runs).to.deep.equal([[1], [2, 3, 4]]);
  });

  it('keeps runs within their weight and runs as many at once as allowed', async () => {
    const runs: string[][] = [];
    let inFlight = 0;
    let most = 0;
    const group = new GroupCommit<string, number>(
      async (items) => {
        runs.push(items);
        most = Math.max(most, ++inFlight);
        await new Promise((resolve) => setImmediate(resolve));
        inFlight--;
        return items.map((s) => s.length);
      },
      { concurrency: 2, maxWeight: 5, weight: (s) => s.length },
    );
    const answers = await Promise.all(['aaa', 'bb', 'cc', 'dddddddd', 'e', 'f'].map((s) => group.submit(s)));
    expect(answers).to.deep.equal([3, 2, 2, 8, 1, 1]);
    expect(most).to.equal(2);
    // 'aaa' and 'bb' start alone (two runs free); then 'cc' (a heavy item runs alone), 'dddddddd', 'e'+'f'.
    expect(runs).to.deep.equal([['aaa'], ['bb'], ['cc'], ['dddddddd'], ['e', 'f']]);
  });

  it('with even runs, starts a further run only once as much waits as the lightest run in flight carries', async () => {
    const { runs, first, group } = evenRuns();
    const answers = [group.submit('aaa'), group.submit('b')];
    // 'aaa' runs; 'b' alone would be a run a third as full: it waits while a place is free.
    expect(runs).to.deep.equal([['aaa']]);
    answers.push(group.submit('cc'));
    // 'b' and 'cc' weigh as much as the run in flight: they start beside it.
    expect(runs).to.deep.equal([['aaa'], ['b', 'cc']]);
    answers.push(group.submit('d'));
    expect(runs).to.have.length(2);
    // 'b' and 'cc' are done; 'd' still waits on the heavier run in flight.
    await answers[2];
    expect(runs).to.have.length(2);
    first.open();
    expect(await Promise.all(answers)).to.deep.equal([3, 1, 2, 1]);
    // A place freed with nothing in flight: 'd' runs at once, whatever it weighs.
    expect(runs).to.deep.equal([['aaa'], ['b', 'cc'], ['d']]);
  });

  it('with even runs, starts a further run once a whole run waits though the one in flight is heavier', async () => {
    const { runs, first, group } = evenRuns(4);
    const answers = [group.submit('aaaaaaaa'), group.submit('bb')];
    expect(runs).to.deep.equal([['aaaaaaaa']]);
    // A run holds at most 4: 'bb' and 'cc' fill one, so it starts beside the heavy item.
    answers.push(group.submit('cc'));
    expect(runs).to.deep.equal([['aaaaaaaa'], ['bb', 'cc']]);
    first.open();
    expect(await Promise.all(answers)).to.deep.equal([8, 2, 2]);
  });

  it('fails only the bad item of a failed run: the others are answered', async () => {
    const first = gate();
    let started = false;
    const group = new GroupCommit<number, number>(async (items) => {
      if (!started) {
        started = true;
        await first.opened;
      }
      if (items.includes(13)) throw new Error(`unlucky ${items.join(',')}`);
      return items;
    });
    const answers = [1, 12, 13, 14].map((n) => group.submit(n).catch((err: Error) => err.message));
    first.open();
    expect(await Promise.all(answers)).to.deep.equal([1, 12, 'unlucky 13', 14]);
  });

  it('runs the halves of a failed run again, down to the bad item: 2·log2(n) runs more, not n', async () => {
    const first = gate();
    const runs: number[][] = [];
    const group = new GroupCommit<number, number>(async (items) => {
      runs.push(items);
      if (runs.length === 1) await first.opened;
      if (items.includes(6)) throw new Error(`unlucky ${items.join(',')}`);
      return items;
    });
    const answers = [0, 1, 2, 3, 4, 5, 6, 7, 8].map((n) => group.submit(n).catch((err: Error) => err.message));
    first.open();
    expect(await Promise.all(answers)).to.deep.equal([0, 1, 2, 3, 4, 5, 'unlucky 6', 7, 8]);
    expect(runs).to.deep.equal([[0], [1, 2, 3, 4, 5, 6, 7, 8], [1, 2, 3, 4], [5, 6, 7, 8], [5, 6], [5], [6], [7, 8]]);
  });

  it('tells its owner once the last run ends with nothing waiting, and not before', async () => {
    const first = gate();
    const idle: number[][] = [];
    const runs: number[][] = [];
    const group = new GroupCommit<number, number>(
      async (items) => {
        runs.push(items);
        if (runs.length === 1) await first.opened;
        return items;
      },
      { onIdle: () => idle.push(runs.flat()) },
    );
    const answers = [1, 2, 3].map((n) => group.submit(n));
    await Promise.resolve();
    expect(idle).to.deep.equal([]);
    first.open();
    expect(await Promise.all(answers)).to.deep.equal([1, 2, 3]);
    await waitFor(() => idle.length > 0, 1_000);
    expect(idle).to.deep.equal([[1, 2, 3]]);
    expect(await group.submit(4)).to.equal(4);
    await waitFor(() => idle.length > 1, 1_000);
    expect(idle).to.deep.equal([
      [1, 2, 3],
      [1, 2, 3, 4],
    ]);
  });
});
