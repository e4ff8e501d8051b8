import request from 'supertest';
import type { Server } from 'node:http';
import type { Engine } from '@switchboard/core';
import { createTestEngine, createTenant, TestBackend, TestTenant } from '@switchboard/core/testing';
import campaign from '../src';

export interface CampaignFixture {
  engine: Engine;
  server: Server;
  tenant: TestTenant;
  api(auth?: TestTenant): {
    get(path: string): request.Test;
    post(path: string, body?: object): request.Test;
    put(path: string, body?: object): request.Test;
    delete(path: string, body?: object): request.Test;
  };
  close(): Promise<void>;
}

/** An engine with the campaign plugin, a listening server and one tenant with every permission. */
export async function campaignFixture(backend: TestBackend, env: Record<string, string> = {}): Promise<CampaignFixture> {
  const engine = await createTestEngine(backend, { plugins: [campaign], env: { RATE_LIMIT_SCALE: '1000', ...env } });
  const server = engine.http().listen(0);
  const tenant = await createTenant(engine);
  const api = (auth: TestTenant = tenant) => ({
    get: (path: string) => request(server).get(`/api/campaign${path}`).set(auth.auth),
    post: (path: string, body?: object) => request(server).post(`/api/campaign${path}`).set(auth.auth).send(body ?? {}),
    put: (path: string, body?: object) => request(server).put(`/api/campaign${path}`).set(auth.auth).send(body ?? {}),
    delete: (path: string, body?: object) => {
      const req = request(server).delete(`/api/campaign${path}`).set(auth.auth);
      return body ? req.send(body) : req;
    },
  });
  return {
    engine,
    server,
    tenant,
    api,
    async close() {
      server.close();
      await engine.close();
    },
  };
}
