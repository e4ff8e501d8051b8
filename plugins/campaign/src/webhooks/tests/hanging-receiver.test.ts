import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { describeEachBackend, waitFor } from '@switchboard/core/testing';
import { campaignFixture, CampaignFixture } from '../../shared/tests/support';
import { receiver } from '../../shared/tests/webhook-receiver';

const CONCURRENCY = 8;
const TIMEOUT_MS = 5_000;

/** A receiver that accepts connections and never answers; how many it holds open now, and at most. */
async function hangingReceiver() {
  const sockets = new Set<net.Socket>();
  let most = 0;
  const server = net.createServer((socket) => {
    sockets.add(socket);
    most = Math.max(most, sockets.size);
    socket.resume();
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hang`,
    open: () => sockets.size,
    most: () => most,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

describeEachBackend('campaign: a webhook receiver that hangs', (backend) => {
  let f: CampaignFixture;
  before(async () => {
    f = await campaignFixture(backend(), {}, undefined, {
      plugins: [
        {
          id: 'campaign',
          package: '@switchboard/plugin-campaign',
          options: { webhooks: { concurrency: CONCURRENCY, timeoutMs: TIMEOUT_MS } },
        },
      ],
    });
    f.engine.startWorkers();
  });
  after(async () => {
    await f?.close();
  });

  it("holds a quarter of the places at most, and another subscription's deliveries go out meanwhile", async () => {
    const hanging = await hangingReceiver();
    const healthy = await receiver();
    try {
      const events = ['subscriber.created'];
      await f.api().post('/webhooks', { name: 'Hangs', url: hanging.url, events }).expect(201);
      // Deliveries enough to hold every place, were the hanging subscription given them all.
      const subscribers = Array.from({ length: 3 * CONCURRENCY }, (_, i) => ({ email: `h${i}@hang.test` }));
      await f.api().post('/subscribers/batch', { subscribers, skip_confirmation: true }).expect(200);
      await waitFor(() => hanging.open() > 0, 10_000);
      await f
        .api()
        .post('/webhooks', { name: 'Answers', url: healthy.url('/ok'), events })
        .expect(201);

      const created = Date.now();
      await f.api().post('/subscribers', { email: 'ok@hang.test', confirmed: true }).expect(201);
      // Well inside the time limit the hanging tries hold their places for.
      await waitFor(() => healthy.at('/ok').length === 1, TIMEOUT_MS / 2);
      expect(Date.now() - created).to.be.below(TIMEOUT_MS / 2);
      expect(hanging.most()).to.equal(CONCURRENCY / 4);
    } finally {
      await hanging.close();
      await healthy.close();
    }
  }).timeout(30_000);
});
