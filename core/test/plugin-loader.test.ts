import { expect } from 'chai';
import { definePlugin, loadPlugins, PluginConfig, PluginLoadError } from '../src';

const config = (id: string, options: Record<string, unknown> = {}): PluginConfig => ({ id, package: `pkg-${id}`, options });
const registry = (plugins: Record<string, unknown>) => (pkg: string) => {
  if (!(pkg in plugins)) throw Object.assign(new Error(`Cannot find module '${pkg}'`), { code: 'MODULE_NOT_FOUND' });
  return plugins[pkg];
};

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
    expect(() => loadPlugins([config('b')], registry({ 'pkg-b': b }))).to.throw(PluginLoadError, 'depends on plugin "a", which is not enabled');
  });

  it('refuses dependency cycles', () => {
    const x = definePlugin({ id: 'x', version: '1.0', dependsOn: ['y'] });
    const y = definePlugin({ id: 'y', version: '1.0', dependsOn: ['x'] });
    expect(() => loadPlugins([config('x'), config('y')], registry({ 'pkg-x': x, 'pkg-y': y }))).to.throw(PluginLoadError, 'cycle');
  });

  it('refuses a package that is not a plugin, or is another plugin', () => {
    expect(() => loadPlugins([config('a')], registry({ 'pkg-a': { hello: 1 } }))).to.throw(PluginLoadError, 'does not default-export a plugin');
    expect(() => loadPlugins([config('a')], registry({ 'pkg-a': b }))).to.throw(PluginLoadError, 'is the plugin "b"');
  });

  it('validates options against the plugin schema and applies defaults', () => {
    const withOptions = definePlugin({
      id: 'o',
      version: '1.0',
      optionsSchema: { type: 'object', properties: { size: { type: 'integer', default: 3 } }, additionalProperties: false },
    });
    const resolve = registry({ 'pkg-o': withOptions });
    expect(loadPlugins([config('o')], resolve)[0].options).to.deep.equal({ size: 3 });
    expect(() => loadPlugins([config('o', { size: 'big' })], resolve)).to.throw(PluginLoadError, 'plugins.o.options');
  });

  it('refuses a plugin enabled twice', () => {
    expect(() => loadPlugins([config('a'), config('a')], registry({ 'pkg-a': a }))).to.throw(PluginLoadError, 'enabled twice');
  });
});
