import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import request from 'supertest';
import { defineService, definePlugin, Engine, provide } from '../src';
import { createTestEngine, describeEachBackend, recordingLogger } from '../src/testing';

/** A plugin that writes down which of its hooks the engine called, in order. */
function recordingPlugin(calls: string[]) {
  return definePlugin({
    id: 'recorder',
    version: '1.0',
    routes: (api) => {
      api
        .group({ prefix: '/api/recorder', tag: 'recorder', auth: 'none', rateLimit: null })
        .get('/ping', { summary: 'ping', response: {} }, async () => ({ pong: true }));
    },
    start: async () => {
      calls.push('start');
    },
    jobs: () => {
      calls.push('jobs');
    },
    recurring: () => {
      calls.push('recurring');
      return [];
    },
    stop: async () => {
      calls.push('stop');
    },
  });
}

describeEachBackend('engine lifecycle: start() brings up what a process runs, in order', (backend) => {
  const started = async (parts: Parameters<Engine['start']>[0]) => {
    const calls: string[] = [];
    const engine = await createTestEngine(backend(), {
      plugins: [recordingPlugin(calls)],
      migrate: false,
      env: { PORT: '0' },
    });
    await engine.start(parts);
    return { engine, calls };
  };

  it('a scheduler process runs the plugins start hooks before their recurring tasks', async () => {
    const { engine, calls } = await started({ scheduler: true });
    await engine.close();
    expect(calls).to.deep.equal(['start', 'recurring', 'stop']);
  });

  it('a worker process starts the plugins, then their queue processors; starting twice starts once', async () => {
    const { engine, calls } = await started({ workers: true });
    await engine.start({ workers: true });
    await engine.close();
    expect(calls).to.deep.equal(['start', 'jobs', 'stop']);
  });

  it('serve migrates, starts everything, and listens last', async () => {
    const { engine, calls } = await started({ migrate: true, workers: true, scheduler: true, http: true });
    try {
      expect(calls).to.deep.equal(['start', 'jobs', 'recurring']);
      expect((await engine.migrator().status()).every((s) => s.pending.length === 0)).to.equal(true);
      const { port } = engine.httpServer!.address() as AddressInfo;
      await request(`http://127.0.0.1:${port}`).get('/api/recorder/ping').expect(200, { pong: true });
    } finally {
      await engine.close();
    }
  });

  it('a process that does not migrate, on a database a newer release migrated, says so once at start', async () => {
    const { logger, entries } = recordingLogger();
    const calls: string[] = [];
    const engine = await createTestEngine(backend(), { plugins: [recordingPlugin(calls)], logger });
    try {
      await engine
        .knex('migrations_core')
        .insert({ name: '99.0/01-from-the-future', batch: 99, migration_time: new Date() });
      await engine.start({ workers: true });
      const said = entries.filter((e) => String(e.msg).includes('a newer release migrated it'));
      expect(said).to.have.length(1);
      expect(said[0]).to.deep.include({ plugin: 'core', unknown: ['99.0/01-from-the-future'] });
      expect(calls).to.deep.equal(['start', 'jobs']);
    } finally {
      await engine.close();
    }
  });

  it('refuses a route whose permission names a resource no enabled plugin declares, listing the known ones', async () => {
    const borrower = definePlugin({
      id: 'borrower',
      version: '1.0',
      resources: ['todos'],
      routes: (api) => {
        api
          .group({ prefix: '/api/borrower', tag: 'borrower', auth: 'token' })
          .get('/x', { summary: 'x', permission: 'projects:read', response: {} }, async () => ({}));
      },
    });
    let error: Error | undefined;
    await createTestEngine(backend(), { plugins: [borrower], migrate: false }).catch((err: Error) => (error = err));
    expect(error?.message).to.equal(
      'GET /api/borrower/x of plugin borrower: permission projects:read: unknown resource "projects" (known: todos)',
    );
  });

  it('refuses a route whose permission names an action no token can hold', async () => {
    const typo = definePlugin({
      id: 'typo',
      version: '1.0',
      resources: ['todos'],
      routes: (api) => {
        api
          .group({ prefix: '/api/typo', tag: 'typo', auth: 'token' })
          .delete('/x', { summary: 'x', permission: 'todos:delete', response: {} }, async () => ({}));
      },
    });
    let error: Error | undefined;
    await createTestEngine(backend(), { plugins: [typo], migrate: false }).catch((err: Error) => (error = err));
    expect(error?.message).to.equal(
      'DELETE /api/typo/x of plugin typo: permission todos:delete: unknown action "delete" (read, write or *)',
    );
  });

  it('compiles route schemas when the HTTP app is built: a schema ajv refuses stops serving, not a command', async () => {
    const broken = definePlugin({
      id: 'broken',
      version: '1.0',
      routes: (api) => {
        api
          .group({ prefix: '/api/broken', tag: 'broken', auth: 'none', rateLimit: null })
          .post('/x', { summary: 'x', body: { type: 'object', colour: 'red' }, response: {} }, async () => ({}));
      },
    });
    const engine = await createTestEngine(backend(), { plugins: [broken], migrate: false });
    try {
      expect(() => engine.http()).to.throw(/colour/);
    } finally {
      await engine.close();
    }
  });

  it('stops start-up on an environment variable a plugin declares that is missing or wrong, naming it', async () => {
    const fussy = definePlugin({
      id: 'fussy',
      version: '1.0',
      envSchema: {
        type: 'object',
        required: ['FUSSY_URL'],
        properties: { FUSSY_URL: { type: 'string', pattern: '^https?://' }, FUSSY_MODE: { enum: ['a', 'b'] } },
      },
    });
    const refusal = (env: Record<string, string>) =>
      createTestEngine(backend(), { plugins: [fussy], migrate: false, env }).then(
        async (engine) => {
          await engine.close();
          return '';
        },
        (err: Error) => err.message,
      );
    expect(await refusal({})).to.equal(
      'Environment of plugin "fussy" is invalid: FUSSY_URL is required. Set the variables in the environment (README, Configuration).',
    );
    expect(await refusal({ FUSSY_URL: 'ftp://x', FUSSY_MODE: 'c' })).to.match(
      /FUSSY_URL must match pattern "\^https\?:\/\/"; FUSSY_MODE must be equal to one of the allowed values \(a, b\)/,
    );
    expect(await refusal({ FUSSY_URL: 'https://x', FUSSY_MODE: 'a' })).to.equal('');
  });

  describe('services plugins provide one another', () => {
    interface Greeter {
      hello(name: string): string;
    }
    const GREETER = defineService<Greeter>('test.greeter', 'greeter');

    it('stops start-up when a plugin needs a service no enabled plugin provides, naming the service and its provider', async () => {
      const caller = definePlugin({ id: 'caller', version: '1.0', needs: [GREETER] });
      let error: Error | undefined;
      await createTestEngine(backend(), { plugins: [caller], migrate: false }).catch((err: Error) => (error = err));
      expect(error?.message).to.equal(
        'Plugin "caller" needs the service "test.greeter", which no enabled plugin provides: enable "greeter", which provides it (PLUGINS / config/switchboard.json).',
      );
    });

    it('injects a provided service, made once by its provider, into the plugins that need it and no other', async () => {
      let made = 0;
      const greeter = definePlugin({
        id: 'greeter',
        version: '1.0',
        provides: [
          provide(GREETER, (ctx) => {
            made++;
            return { hello: (name) => `hello ${name}, from ${ctx.id}` };
          }),
        ],
      });
      const caller = definePlugin({ id: 'caller', version: '1.0', needs: [GREETER] });
      const bystander = definePlugin({ id: 'bystander', version: '1.0' });
      // The one that needs it is enabled first: the provider is ordered before it.
      const engine = await createTestEngine(backend(), { plugins: [caller, bystander, greeter], migrate: false });
      try {
        expect(engine.plugins.map((l) => l.plugin.id)).to.deep.equal(['greeter', 'caller', 'bystander']);
        expect(made).to.equal(0);
        const resolve = (id: string) => engine.contexts.get(id)!.container.resolve<Greeter>(GREETER.key);
        expect(resolve('caller').hello('ada')).to.equal('hello ada, from greeter');
        expect(resolve('caller')).to.equal(resolve('greeter'));
        expect(made).to.equal(1);
        expect(() => resolve('bystander')).to.throw(/service:test\.greeter/);
      } finally {
        await engine.close();
      }
    });
  });

  it('an engine that never started does not stop its plugins', async () => {
    const calls: string[] = [];
    const engine = await createTestEngine(backend(), { plugins: [recordingPlugin(calls)], migrate: false });
    await engine.close();
    expect(calls).to.deep.equal([]);
  });
});
