import type { Server } from 'node:http';
import type { Knex } from 'knex';
import request from 'supertest';
import type { Clock, Engine, Logger } from '@switchboard/core';
import { createTestEngine, TestBackend } from '@switchboard/core/testing';
import usersProjects from '@switchboard/plugin-users-projects';
import monitor from '../../index';

export const API_KEY = 'monitor-test-key-0123456789';

export interface MonitorFixture {
  engine: Engine;
  server: Server;
  /** GET /api/servermonitor<path>/<API_KEY> */
  call(path: string, key?: string): request.Test;
  close(): Promise<void>;
}

/** An engine with users-projects and server-monitor, the API key set, checks quick to confirm. */
export async function monitorFixture(
  backend: TestBackend,
  options: { env?: Record<string, string>; clock?: Clock; plugin?: Record<string, unknown>; logger?: Logger } = {},
): Promise<MonitorFixture> {
  const engine = await createTestEngine(backend, {
    plugins: [usersProjects, monitor],
    env: { SERVER_MONITOR_API_KEY: API_KEY, RATE_LIMIT_SCALE: '1000', ...options.env },
    clock: options.clock,
    logger: options.logger,
    overrides: {
      plugins: [
        { id: 'users-projects', package: '@switchboard/plugin-users-projects', options: {} },
        {
          id: 'server-monitor',
          package: '@switchboard/plugin-server-monitor',
          options: {
            checks: { timeoutMs: 2_000, confirmDelayMs: 50, concurrency: 20 }, // the rest as the defaults
            ...options.plugin,
          },
        },
      ],
    },
  });
  const server = engine.http().listen(0);
  return {
    engine,
    server,
    call: (path, key = API_KEY) => request(server).get(`/api/servermonitor${path}/${encodeURIComponent(key)}`),
    async close() {
      server.close();
      await engine.close();
    },
  };
}

let orgs = 0;

/** An organization (plan, subscription) with one administrator whose address is given. */
export async function organization(
  engine: Engine,
  options: { plan?: string; subscription?: string; admin?: string; phone?: string } = {},
): Promise<number> {
  const now = new Date();
  const [id] = await engine.knex('organizations').insert({
    name: `Org ${++orgs}`,
    selected_plan: options.plan ?? 'pro',
    subscription_status: options.subscription ?? 'active',
    created_at: now,
    updated_at: now,
  });
  if (options.admin) await user(engine, Number(id), { email: options.admin, phone: options.phone });
  return Number(id);
}

/** A user of users-projects (an administrator unless another role is given); its id. */
export async function user(
  engine: Engine,
  organizationId: number,
  fields: { email: string; phone?: string; role?: string },
): Promise<number> {
  const now = new Date();
  const [id] = await engine.knex('users').insert({
    organization_id: organizationId,
    name: fields.email.split('@')[0],
    email: fields.email,
    role: fields.role ?? 'admin',
    phone: fields.phone ?? null,
    created_at: now,
    updated_at: now,
  });
  return Number(id);
}

/** An administrator as the setting's `administrators` column holds it (1.2). */
type AdministratorRow = { user_id: number; email_enabled: boolean; sms_enabled: boolean };

/** The organization's notification setting (1.2 shape); what is not given keeps the column's default. */
export async function notificationSetting(
  engine: Engine,
  organizationId: number,
  setting: { administrators?: AdministratorRow[]; sslExpiryDays?: number },
): Promise<void> {
  const now = new Date();
  await engine.knex('monitor_notification_settings').insert({
    organization_id: organizationId,
    ...(setting.administrators && { administrators: JSON.stringify(setting.administrators) }),
    ...(setting.sslExpiryDays !== undefined && { ssl_expiry_days: setting.sslExpiryDays }),
    created_at: now,
    updated_at: now,
  });
}

/** A server as an import makes it. */
export async function addServer(
  engine: Engine,
  organizationId: number,
  endpoint: string,
  fields: Record<string, unknown> = {},
): Promise<number> {
  const now = new Date();
  const [id] = await engine.knex('monitor_servers').insert({
    organization_id: organizationId,
    title: `Server ${endpoint}`,
    endpoint,
    status: '200',
    created_at: now,
    // As the engine leaves it: a check writes both times, an untouched new row has its creation time.
    updated_at: fields.last_checked_at ?? fields.created_at ?? now,
    ...fields,
  });
  return Number(id);
}

/** Check results of a server, `ups` of them up, at the given ages. */
export async function checkResults(knex: Knex, serverId: number, now: Date, ages: number[], ups = ages.length) {
  const rows = ages.map((age, i) => ({
    server_id: serverId,
    checked_at: new Date(now.getTime() - age),
    up: i < ups,
    status: i < ups ? '200' : '503',
  }));
  for (let i = 0; i < rows.length; i += 400) await knex('monitor_check_results').insert(rows.slice(i, i + 400));
}

/** How many rows of a table match. */
export async function rowCount(knex: Knex, table: string, where: Record<string, unknown>): Promise<number> {
  return Number((await knex(table).where(where).count({ n: '*' }))[0].n);
}
