import type { Server } from 'node:http';
import request from 'supertest';
import type { TestTenant } from './engine';

/** Requests to one prefix of a test server, with a tenant's token; each method stands alone (`api.get`). */
export interface ApiClient {
  get(path: string): request.Test;
  post(path: string, body?: object): request.Test;
  put(path: string, body?: object): request.Test;
  patch(path: string, body?: object): request.Test;
  delete(path: string, body?: object): request.Test;
}

export function apiClient(server: Server, prefix: string, tenant: TestTenant): ApiClient {
  const send = (method: 'post' | 'put' | 'patch' | 'delete', path: string, body?: object) => {
    const req = request(server)[method](`${prefix}${path}`).set(tenant.auth);
    return body ? req.send(body) : method === 'delete' ? req : req.send({});
  };
  return {
    get: (path) => request(server).get(`${prefix}${path}`).set(tenant.auth),
    post: (path, body) => send('post', path, body),
    put: (path, body) => send('put', path, body),
    patch: (path, body) => send('patch', path, body),
    delete: (path, body) => send('delete', path, body),
  };
}
