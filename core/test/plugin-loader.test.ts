import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { defineService, definePlugin, hostResolver, loadPlugins, PluginConfig, PluginLoadError, provide } from '../src';

const config = (id: string, options: Record<string, unknown> = {}): PluginConfig => ({
  id,
  package: `pkg-${id}`,
  options,
});
const registry = (plugins: Record<string, unknown>) => (pkg: string) => plugins[pkg];

describe('plugin loader', () => {
  const a = definePlugin({ id: 'a', version: '1.0' });
  const b = definePlugin({ id: 'b', version: '1.0', dependsOn: ['a'] });

  it('loads plugins with their dependencies first', () => {
    const loaded = loadPlugins([config('b'), config('a')], registry({ 'pkg-a': a, 'pkg-b': { default: b } }));
    expect(loaded.map((l) => l.plugin.id)).to.deep.equal(['a', 'b']);
  });

  it('says which package to install when a plugin is missing', () => {
    expect(() => loadPlugins([config('a')], registry({}))).to.throw(PluginLoadError, 'npm install pkg-a');
  });

  it('names a dependency that is not enabled', () => {
    expect(() => loadPlugins([config('b')], registry({ 'pkg-b': b }))).to.throw(
      PluginLoadError,
      'depends on plugin "a", which is not enabled',
    );
  });

  it('orders the provider of a needed service first, and refuses a service provided twice', () => {
    const CLOCKS = defineService<{ now(): number }>('test.clocks');
    const clocks = (id: string) => definePlugin({ id, version: '1.0', provides: [provide(CLOCKS, () => Date)] });
    const user = definePlugin({ id: 'user', version: '1.0', needs: [CLOCKS] });
    const resolve = registry({ 'pkg-user': user, 'pkg-c1': clocks('c1'), 'pkg-c2': clocks('c2') });
    expect(loadPlugins([config('user'), config('c1')], resolve).map((l) => l.plugin.id)).to.deep.equal(['c1', 'user']);
    expect(() => loadPlugins([config('c1'), config('c2')], resolve)).to.throw(
      PluginLoadError,
      'Plugins "c1" and "c2" both provide the service "test.clocks": enable only one of them.',
    );
    expect(() => loadPlugins([config('user')], resolve)).to.throw(
      PluginLoadError,
      'Plugin "user" needs the service "test.clocks", which no enabled plugin provides: enable a plugin that provides it',
    );
  });

  it('refuses dependency cycles', () => {
    const x = definePlugin({ id: 'x', version: '1.0', dependsOn: ['y'] });
    const y = definePlugin({ id: 'y', version: '1.0', dependsOn: ['x'] });
    expect(() => loadPlugins([config('x'), config('y')], registry({ 'pkg-x': x, 'pkg-y': y }))).to.throw(
      PluginLoadError,
      'cycle',
    );
  });

  it('refuses a package that is not a plugin, or is another plugin', () => {
    expect(() => loadPlugins([config('a')], registry({ 'pkg-a': { hello: 1 } }))).to.throw(
      PluginLoadError,
      'does not default-export a plugin',
    );
    expect(() => loadPlugins([config('a')], registry({ 'pkg-a': b }))).to.throw(PluginLoadError, 'is the plugin "b"');
  });

  it('validates options against the plugin schema and applies defaults', () => {
    const withOptions = definePlugin({
      id: 'o',
      version: '1.0',
      optionsSchema: {
        type: 'object',
        properties: { size: { type: 'integer', default: 3 } },
        additionalProperties: false,
      },
    });
    const resolve = registry({ 'pkg-o': withOptions });
    expect(loadPlugins([config('o')], resolve)[0].options).to.deep.equal({ size: 3 });
    expect(() => loadPlugins([config('o', { size: 'big' })], resolve)).to.throw(PluginLoadError, 'plugins.o.options');
  });

  it('refuses a plugin enabled twice', () => {
    expect(() => loadPlugins([config('a'), config('a')], registry({ 'pkg-a': a }))).to.throw(
      PluginLoadError,
      'enabled twice',
    );
  });

  it("loads a third party's plugin installed as its own npm package in the host's folder", () => {
    const host = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-host-'));
    const dir = path.join(host, 'node_modules', 'acme-switchboard-todo');
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(
      path.join(dir, 'package.json'),
      JSON.stringify({ name: 'acme-switchboard-todo', main: 'index.js' }),
    );
    fs.writeFileSync(path.join(dir, 'index.js'), "exports.default = { id: 'todo', version: '1.0.0' };");
    try {
      const [loaded] = loadPlugins([{ id: 'todo', package: 'acme-switchboard-todo', options: {} }], hostResolver(host));
      expect(loaded.plugin).to.deep.equal({ id: 'todo', version: '1.0.0' });
      expect(() =>
        loadPlugins([{ id: 'todo', package: 'acme-switchboard-todo', options: {} }], hostResolver(os.tmpdir())),
      ).to.throw(PluginLoadError, 'npm install acme-switchboard-todo');
    } finally {
      fs.rmSync(host, { recursive: true, force: true });
    }
  });
});
