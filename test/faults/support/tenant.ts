import type { ServeProcess } from './serve-process';

export interface Tenant {
  org: number;
  token: string;
  /** A request to `serve` with this tenant's token. */
  fetch(route: string, init?: RequestInit): Promise<Response>;
  /** A JSON request that must answer `status`; its body. */
  json<T = any>(method: string, route: string, body?: unknown, status?: number): Promise<T>;
}

/** Another organization on the same `serve`, with a token of all permissions, made as an operator would. */
export async function createTenant(serve: ServeProcess, name: string, plan = 'free'): Promise<Tenant> {
  const org = (await serve.cli(['org:create', '--name', name, '--plan', plan])).id as number;
  const token = (await serve.cli(['token:create', '--org', String(org), '--name', name, '--permissions', '*']))
    .token as string;
  const fetch = (route: string, init: RequestInit = {}) =>
    serve.fetch(route, { ...init, headers: { Authorization: `Bearer ${token}`, ...init.headers } });
  return {
    org,
    token,
    fetch,
    async json(method, route, body, status) {
      const res = await fetch(route, { method, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
      const text = await res.text();
      if (status !== undefined && res.status !== status)
        throw new Error(`${method} ${route} answered ${res.status}, not ${status}: ${text.slice(0, 300)}`);
      return (text ? JSON.parse(text) : null) as never;
    },
  };
}
