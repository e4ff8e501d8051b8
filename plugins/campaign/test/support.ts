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

export type UpgradeApi = (method: 'post' | 'get' | 'delete', path: string, body?: object) => request.Test;

/**
 * An engine whose campaign schema is at an older version (migrated to the latest, then rolled back to
 * `version`), a listening server and one tenant: the start of an upgrade test.
 */
export async function campaignAtVersion(backend: TestBackend, version: string): Promise<{ engine: Engine; tenant: TestTenant; api: UpgradeApi; close(): Promise<void> }> {
  const engine = await createTestEngine(backend, { plugins: [campaign], migrate: false });
  await engine.migrator().latest();
  await engine.migrator().rollback({ plugin: 'campaign', to: version });
  const tenant = await createTenant(engine);
  const server = engine.http().listen(0);
  const api: UpgradeApi = (method, path, body) => {
    const req = request(server)[method](`/api/campaign${path}`).set(tenant.auth);
    return body ? req.send(body) : req;
  };
  return {
    engine,
    tenant,
    api,
    async close() {
      server.close();
      await engine.close();
    },
  };
}
