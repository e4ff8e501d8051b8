import { expect } from 'chai';
import Ajv from 'ajv';
import { createTestEngine, embeddedBackend, TestBackend } from '../src/testing';
import { definePlugin, type Engine } from '../src';
import { compileOnce } from '../src/schemas/compile-once';
import { probePlugin } from './support/probe-plugin';

/** A plugin with settings, its schemas new objects each time (as a descriptor built again declares them). */
const withSettings = () =>
  definePlugin({
    id: 'settled',
    version: '1.0',
    optionsSchema: { type: 'object', properties: { size: { type: 'integer', default: 3 } } },
    envSchema: { type: 'object', properties: { SETTLED_MODE: { enum: ['a', 'b'] } } },
  });

describe('schemas compiled once a process (docs/architecture.md, "Routes are declared")', () => {
  it('gives one validator for one schema text and ajv instance', () => {
    const ajv = new Ajv();
    const schema = () => ({ type: 'object', properties: { a: { type: 'integer' } } });
    const first = compileOnce(ajv, schema());
    expect(compileOnce(ajv, schema())).to.equal(first);
    expect(compileOnce(ajv, { type: 'object', properties: { a: { type: 'string' } } })).to.not.equal(first);
    expect(compileOnce(new Ajv(), schema())).to.not.equal(first);
    expect(first({ a: 1 })).to.equal(true);
    expect(first({ a: 'x' })).to.equal(false);
  });

  it('compiles no schema again when another engine of the same plugins reads its settings and builds its HTTP app', async function () {
    // Two SQLite engines: ~2 s on a slow host.
    this.timeout(30_000);
    const backends: TestBackend[] = [];
    const engines: Engine[] = [];
    const open = async () => {
      const backend = embeddedBackend();
      backends.push(backend);
      const engine = await createTestEngine(backend, { plugins: [probePlugin, withSettings()] });
      engines.push(engine);
      engine.http();
    };
    const compile = Ajv.prototype.compile;
    let compiles = 0;
    try {
      await open();
      Ajv.prototype.compile = function (this: Ajv, ...args: Parameters<Ajv['compile']>) {
        compiles++;
        return compile.apply(this, args);
      } as Ajv['compile'];
      await open();
    } finally {
      Ajv.prototype.compile = compile;
      for (const engine of engines) await engine.close();
      for (const backend of backends) await backend.dispose();
    }
    expect(engines).to.have.length(2);
    expect(engines[1].plugins.map((p) => p.options)).to.deep.include({ size: 3 });
    expect(compiles).to.equal(0);
  });
});
