import { expect } from 'chai';
import { SchemaBehindError, SchemaGate } from '../src/db/migrations';
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

  it('ends held work with SchemaBehindError once closed; work that is not held still runs', async () => {
    let missing = ['server-monitor:1.2/07-alert-heartbeats'];
    const gate = new SchemaGate(async () => missing, recordingLogger() as never, 60_000);
    const held = gate.open().then(
      () => null,
      (err: Error) => err,
    );
    await new Promise((resolve) => setImmediate(resolve));
    gate.close();
    const err = await held;
    expect(err).to.be.instanceOf(SchemaBehindError);
    expect(err!.message).to.contain('server-monitor:1.2/07-alert-heartbeats');
    missing = [];
    const open = new SchemaGate(async () => missing, recordingLogger() as never);
    open.close();
    await open.open();
  });

  it('holds nothing when the migrations cannot be read (the work meets the database itself)', async () => {
    const gate = new SchemaGate(() => Promise.reject(new Error('connect ECONNREFUSED')), recordingLogger() as never);
    await gate.open();
    expect(await gate.isOpen()).to.equal(true);
  });
});
