import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import request from 'supertest';
import SwaggerParser from '@apidevtools/swagger-parser';
import type { Engine } from '@switchboard/core';
import { createTestEngine, embeddedBackend, TestBackend } from '@switchboard/core/testing';
import campaign from '@switchboard/plugin-campaign';
import usersProjects from '@switchboard/plugin-users-projects';
import serverMonitor from '@switchboard/plugin-server-monitor';
import { repoRoot } from '../src/cli';

const run = promisify(execFile);
const examinerConfig = path.join(repoRoot, 'test/api');

/** The served OpenAPI document, judged by tools others wrote: swagger-parser and redocly's recommended rules. */
describe('the OpenAPI document, by outside examiners', function () {
  this.timeout(60_000);
  let backend: TestBackend;
  let engine: Engine;
  let document: Record<string, any>;
  before(async () => {
    backend = embeddedBackend();
    engine = await createTestEngine(backend, { plugins: [campaign, usersProjects, serverMonitor] });
    document = (await request(engine.http().callback()).get('/api/openapi.json').expect(200)).body;
  });
  after(async () => {
    await engine.close();
    await backend.dispose();
  });

  it('is valid OpenAPI 3.1 for swagger-parser', async () => {
    const api = await SwaggerParser.validate(structuredClone(document) as never);
    expect(api.info.license).to.deep.equal({ name: 'MIT', identifier: 'MIT' });
  });

  it('passes redocly lint with the recommended rules: no error, no warning', async () => {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'switchboard-redocly-'));
    try {
      for (const file of ['redocly.yaml', '.redocly.lint-ignore.yaml'])
        fs.copyFileSync(path.join(examinerConfig, file), path.join(folder, file));
      fs.writeFileSync(path.join(folder, 'openapi.json'), JSON.stringify(document));
      const redocly = path.join(repoRoot, 'node_modules/.bin/redocly');
      const lint = await run(redocly, ['lint', 'openapi.json', '--config', 'redocly.yaml', '--format=json'], {
        cwd: folder,
      }).catch((failed: { stdout: string }) => failed);
      const report = JSON.parse(lint.stdout) as { totals: object; problems: { ruleId: string; message: string }[] };
      expect(report.problems.map((p) => `${p.ruleId}: ${p.message}`)).to.deep.equal([]);
      expect(report.totals).to.include({ errors: 0, warnings: 0 });
    } finally {
      fs.rmSync(folder, { recursive: true, force: true });
    }
  });

  it('names every operation once and publishes no wildcard or trailing-slash path', () => {
    const operations = Object.values(document.paths as Record<string, Record<string, { operationId: string }>>)
      .flatMap((methods) => Object.values(methods))
      .map((op) => op.operationId);
    expect(new Set(operations).size).to.equal(operations.length);
    for (const p of Object.keys(document.paths)) expect(p).to.not.match(/\*|.\/$/);
  });

  it('makes a body optional where its schema requires nothing (a bodiless unsubscribe), required elsewhere', () => {
    const body = (path: string) => document.paths[path].post.requestBody;
    expect(body('/api/campaign/subscribers/{id}/unsubscribe').required).to.equal(false);
    expect(body('/api/campaign/subscribers').required).to.equal(true);
    expect(body('/api/v1/users').required).to.equal(true);
  });

  it("declares the headers responses carry: X-RateLimit-* where counted, Retry-After on a 429, a redirect's Location", () => {
    const users = document.paths['/api/v1/users'].get.responses;
    expect(users['200'].headers).to.have.keys('X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset');
    expect(users['429'].headers).to.include.keys('Retry-After', 'X-RateLimit-Reset');
    const receive = document.paths['/api/campaign/webhook/{provider}'].post.responses;
    expect(receive['200'].headers, 'a group counting refusals only').to.equal(undefined);
    expect(receive['401'].headers).to.include.keys('X-RateLimit-Remaining');
    expect(document.paths['/api/campaign/t/c'].get.responses['302'].headers).to.have.key('Location');
  });

  it('types what a generated client sends and reads: batch rows, meta_data, the click redirect body', () => {
    const json = (op: any) => op.requestBody.content['application/json'].schema;
    const batch = document.paths['/api/campaign/subscribers/batch'];
    const created = json(batch.post).properties.subscribers.items;
    expect(created.required).to.deep.equal(['email']);
    expect(created.properties).to.include.keys('email', 'first_name', 'meta_data', 'lists');
    expect(created.description).to.match(/checked on its own/);
    expect(created).to.not.have.property('x-checked-alone');
    expect(json(batch.put).properties.subscribers.items.properties).to.include.keys('id', 'email', 'first_name');
    const subscriber =
      document.paths['/api/campaign/subscribers/{id}'].get.responses['200'].content['application/json'].schema
        .properties.data.properties;
    expect(subscriber.meta_data.additionalProperties.anyOf).to.deep.equal([
      { type: 'string' },
      { type: 'array', items: { type: 'string' } },
    ]);
    expect(document.paths['/api/campaign/t/c'].get.responses['302'].content).to.have.key('text/html');
    // A change needs one known member (unknown ones are dropped first): said as "any one of them required".
    const change = json(document.paths['/api/campaign/subscribers/{id}'].put);
    expect(change).to.not.have.property('minProperties');
    // Each branch with its member's schema: a bare `{required}` made generated clients type the body unknown.
    expect(change.anyOf).to.deep.include({
      required: ['first_name'],
      properties: { first_name: change.properties.first_name },
    });
    expect(change.anyOf).to.have.length(Object.keys(change.properties).length);
    expect(change.anyOf.every((branch: { properties?: object }) => branch.properties)).to.equal(true);
    // Rules no schema states are named on their routes' 422 (a generated client's authors read them there).
    const send = document.paths['/api/campaign/messages/{id}/send'].post.responses['422'].description;
    for (const rule of ['future', 'sendable', 'exists', 'from_email/required']) expect(send).to.contain(rule);
    expect(document.paths['/api/campaign/messages'].get.responses['422'].description).to.contain('after_from_date');
  });

  it("publishes the receiver's body (the provider's own: JSON, a form, multipart or SNS's text) and HEAD on a heartbeat ping", () => {
    const receive = document.paths['/api/campaign/webhook/{provider}'].post.requestBody;
    expect(receive.content).to.have.keys(
      'application/json',
      'application/x-www-form-urlencoded',
      'multipart/form-data',
      'text/plain',
    );
    // Any fields: a generated client typed a form `Record<string, never>` (openapi-typescript, session 35).
    for (const form of ['application/x-www-form-urlencoded', 'multipart/form-data'])
      expect(receive.content[form].schema).to.deep.equal({ type: 'object', additionalProperties: true });
    const ping = document.paths['/api/servermonitor/ping/{token}'];
    expect(ping).to.have.keys('get', 'post', 'head');
    expect(ping.head.responses['200'].content).to.equal(undefined);
    expect(ping.head.operationId).to.equal('headServermonitorPingByToken');
  });

  it("documents the server-monitor routes' own error body, as the spec states it", () => {
    const check = document.paths['/api/servermonitor/check/{type}/{key}'].get;
    expect(Object.keys(check.responses)).to.include.members(['200', '400', '402', '403', '404', '500']);
    const body = check.responses['403'].content['application/json'].schema;
    expect(body.required).to.deep.equal(['success', 'message']);
    expect(document.paths['/api/servermonitor/dashboard/{key}'].get.responses['200'].content).to.have.key('text/html');
  });
});
