import { expect } from 'chai';
import { SchemaGate } from '../src/db/migrations';
import { waitFor } from '../src/testing';

/** Keeps what the gate says. */
function recordingLogger() {
  const lines: string[] = [];
  return {
    lines,
    warn: (_obj: unknown, msg?: string) => void lines.push(`warn ${msg}`),
    info: (msg: string) => void lines.push(`info ${msg}`),
  };
}

describe('schema gate', () => {
  it('reads the applied migrations at most once a reading interval, shared by every caller', async () => {
    let reads = 0;
    const gate = new SchemaGate(async () => (reads++, []), recordingLogger() as never, 60_000);
    await Promise.all(Array.from({ length: 20 }, () => gate.open()));
    expect(await gate.isOpen()).to.equal(true);
    expect(reads).to.equal(1);
  });

  it('holds work while migrations are missing, says so once, and lets it go once they are applied', async () => {
    let missing = ['campaign:1.16/01-send-waiting'];
    const logger = recordingLogger();
    const gate = new SchemaGate(async () => missing, logger as never, 20);
    let done = false;
    const held = gate.open().then(() => (done = true));
    await waitFor(() => logger.lines.length > 0, 5_000);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(done, 'held over several readings').to.equal(false);
    missing = [];
    await held;
    expect(logger.lines).to.deep.equal([
      'warn the database lacks migrations of this release (campaign:1.16/01-send-waiting): this process holds its jobs and scheduled tasks until "switchboard migrate" has run',
      'info the database has every migration of this release again: held work goes on',
    ]);
  });

  it('keeps held work held once closed, reading no more; work that is not held still runs', async () => {
    let reads = 0;
    const gate = new SchemaGate(
      async () => (reads++, ['server-monitor:1.2/07-alert-heartbeats']),
      recordingLogger() as never,
      20,
    );
    let settled = false;
    void gate.open().then(
      () => (settled = true),
      () => (settled = true),
    );
    await waitFor(() => reads >= 1, 5_000);
    gate.close();
    const readsAtClose = reads;
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(settled, 'neither run nor failed: its queue gives up on it, bee-queue hands it on once it stalls').to.equal(
      false,
    );
    expect(reads, 'no reading once closed (the pools close)').to.be.at.most(readsAtClose + 1);
    const open = new SchemaGate(async () => [], recordingLogger() as never);
    await open.open();
    open.close();
    await open.open();
  });

  it('holds nothing when the migrations cannot be read (the work meets the database itself)', async () => {
    const gate = new SchemaGate(() => Promise.reject(new Error('connect ECONNREFUSED')), recordingLogger() as never);
    await gate.open();
    expect(await gate.isOpen()).to.equal(true);
  });
});
