import net from 'node:net';
import { expect } from 'chai';
import { createKnex } from '../src/db/knex';
import { waitForFirstAnswer } from '../src/db/first-answer';

describe('the database at start-up', () => {
  it('stops a process after the wait, naming the database without its password, said once while waiting', async () => {
    // A port that refuses: bound, then closed.
    const closed = net.createServer().listen(0, '127.0.0.1');
    await new Promise((resolve) => closed.once('listening', resolve));
    const port = (closed.address() as net.AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const url = `mysql://app:s3cret@127.0.0.1:${port}/shop`;
    const knex = createKnex(url, { log: { warn: () => undefined, error: () => undefined } });
    const warnings: string[] = [];
    try {
      const started = Date.now();
      const err = await waitForFirstAnswer(knex, url, { warn: (_o, msg) => warnings.push(msg) }, 1_500).then(
        () => null,
        (e: Error) => e,
      );
      expect(Date.now() - started).to.be.at.least(1_400);
      expect(err?.message).to.match(
        new RegExp(
          `^The database at mysql://app:\\*\\*\\*@127\\.0\\.0\\.1:${port}/shop does not answer within 1\\.5 s \\(connect ECONNREFUSED`,
        ),
      );
      expect(err?.message).to.not.contain('s3cret');
      expect(warnings).to.deep.equal([
        `The database at mysql://app:***@127.0.0.1:${port}/shop does not answer yet: waiting up to 1.5 s`,
      ]);
    } finally {
      await knex.destroy();
    }
  }).timeout(30_000);

  it('waits for nothing on SQLite', async () => {
    const knex = createKnex('sqlite::memory:');
    try {
      await waitForFirstAnswer(knex, 'sqlite::memory:', { warn: () => expect.fail('no warning') }, 1);
    } finally {
      await knex.destroy();
    }
  });
});
