import { expect } from 'chai';
import request from 'supertest';
import type { Server } from 'node:http';
import { createTestEngine, createTenant, embeddedBackend, TestBackend, TestTenant } from '../src/testing';
import type { Engine } from '../src';
import { probePlugin } from './support/probe-plugin';

/** `default-src 'self';script-src 'self'` as { 'default-src': ["'self'"], ... } */
const directives = (policy: string) =>
  Object.fromEntries(
    policy
      .split(';')
      .map((d) => d.trim().split(/\s+/))
      .filter((words) => words[0])
      .map(([name, ...values]) => [name, values]),
  ) as Record<string, string[]>;

describe('security headers', () => {
  let backend: TestBackend;
  let engine: Engine;
  let server: Server;
  let tenant: TestTenant;
  before(async () => {
    backend = embeddedBackend();
    engine = await createTestEngine(backend, {
      plugins: [probePlugin],
      env: { RATE_LIMIT_SCALE: '100', PUBLIC_URL: 'https://api.example.com' },
    });
    server = engine.http().listen(0);
    tenant = await createTenant(engine);
  });
  after(async () => {
    server.close();
    await engine.close();
    await backend.dispose();
  });

  it('sends X-Content-Type-Options: nosniff on every response, successes and errors alike', async () => {
    const requests = [
      request(server).get('/health'),
      request(server).get('/metrics'),
      request(server).get('/api/openapi.json'),
      request(server).get('/api/docs'),
      request(server).get('/api/docs/swagger-ui.css'),
      request(server).get('/api/probe/things/7').set(tenant.auth),
      request(server).get('/api/probe/things/7'),
      request(server).get('/api/probe/things/0x7').set(tenant.auth),
      request(server).get('/api/probe/boom').set(tenant.auth),
      request(server).get('/nowhere'),
      request(server).put('/health'),
      (request(server) as any).trace('/nowhere'),
    ];
    for (const req of requests) {
      const res = await req;
      expect(res.headers['x-content-type-options'], `${req.method} ${req.url}`).to.equal('nosniff');
    }
  });

  it('protects the HTML docs page: a content security policy and no framing', async () => {
    const res = await request(server).get('/api/docs').expect(200).expect('Content-Type', /html/);
    expect(res.headers['x-frame-options']).to.equal('DENY');
    const policy = directives(res.headers['content-security-policy']);
    expect(policy['frame-ancestors']).to.deep.equal(["'none'"]);
    expect(policy['default-src']).to.deep.equal(["'self'"]);
    expect(policy['object-src']).to.deep.equal(["'none'"]);
    expect(policy['connect-src']).to.deep.equal(["'self'", 'https://api.example.com']);
    expect(policy['script-src']).to.deep.equal(["'self'"]);
    expect(policy['style-src']).to.deep.equal(["'self'"]);
  });

  it("allows the docs page's own scripts and styles under its policy, and they are served", async () => {
    const html = (await request(server).get('/api/docs').expect(200)).text;
    // Under script-src 'self' and style-src 'self' nothing inline runs: every script and style is a file.
    expect(html).not.to.match(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.to.match(/<style\b|\sstyle=/);
    expect(html).not.to.match(/\son[a-z]+=/);
    const scripts = [...html.matchAll(/<script[^>]*\bsrc="([^"]+)"/g)].map((m) => m[1]);
    const styles = [...html.matchAll(/<link[^>]*rel="stylesheet"[^>]*href="([^"]+)"/g)].map((m) => m[1]);
    expect(scripts).to.deep.equal(['/api/docs/swagger-ui-bundle.js', '/api/docs/swagger-init.js']);
    expect(styles).to.deep.equal(['/api/docs/swagger-ui.css']);
    for (const src of [...scripts, ...styles]) {
      // Same-origin paths: what 'self' allows.
      expect(src, src).to.match(/^\/[^/]/);
      const asset = await request(server).get(src).expect(200);
      expect(asset.headers['content-type'], src).to.match(src.endsWith('.css') ? /text\/css/ : /javascript/);
    }
    const init = (await request(server).get('/api/docs/swagger-init.js')).text;
    expect(init).to.contain("url: '/api/openapi.json'");
  });

  it('leaves the policy and framing headers to HTML: JSON answers carry only nosniff', async () => {
    const res = await request(server).get('/api/probe/things/7').set(tenant.auth).expect(200);
    expect(res.headers['content-security-policy']).to.equal(undefined);
    expect(res.headers['x-frame-options']).to.equal(undefined);
  });
});
