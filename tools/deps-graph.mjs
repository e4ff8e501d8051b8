// `npm run deps:graph [-- --violations]`: dependency-cruiser's JSON result (on stdin) summed up per plugin as
// feature -> feature arrows with the number of imports behind each (and how many of them are deep, past the
// other feature's index.ts), the cycles between features, and the rule violations; --violations lists those
// grouped by the importing feature. Features are those of .dependency-cruiser.cjs; `(root)` is the files
// directly in src/ (index.ts, engine-parts.ts, commands.ts), `shared` is src/shared/.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { featurePattern } = require('../.dependency-cruiser.cjs');
const FEATURE = new RegExp(`^(${featurePattern})/`);
const listViolations = process.argv.includes('--violations');

const input = await new Promise((resolve, reject) => {
  let text = '';
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (chunk) => (text += chunk));
  process.stdin.on('end', () => resolve(text));
  process.stdin.on('error', reject);
});
const result = JSON.parse(input);

/** The plugin and unit (feature, `shared` or `(root)`) of a file under plugins/<plugin>/src/, else null. */
function unitOf(path) {
  const inPlugin = /^plugins\/([^/]+)\/src\/(.+)$/.exec(path);
  if (!inPlugin) return null;
  const [, plugin, rest] = inPlugin;
  // A folder (a folder-level violation names folders) is matched as the inside of itself.
  const feature = FEATURE.exec(/\.[a-z]+$/.test(path) ? path : `${path}/`);
  if (feature) return { plugin, unit: feature[1].slice(`plugins/${plugin}/src/`.length) };
  return { plugin, unit: rest.startsWith('shared/') ? 'shared' : '(root)' };
}
const isFrontDoor = (path, unit) => path.endsWith(`/src/${unit}/index.ts`);

/** plugin -> from -> to -> { imports, deep } */
const graph = new Map();
const arrowsOf = (plugin) => graph.get(plugin) ?? graph.set(plugin, new Map()).get(plugin);
for (const module of result.modules) {
  const from = unitOf(module.source);
  if (!from) continue;
  const arrows = arrowsOf(from.plugin);
  if (!arrows.has(from.unit)) arrows.set(from.unit, new Map());
  for (const dependency of module.dependencies) {
    const to = unitOf(dependency.resolved);
    if (!to || to.plugin !== from.plugin || to.unit === from.unit) continue;
    const targets = arrows.get(from.unit);
    const arrow = targets.get(to.unit) ?? targets.set(to.unit, { imports: 0, deep: 0 }).get(to.unit);
    arrow.imports += 1;
    if (to.unit !== 'shared' && to.unit !== '(root)' && !isFrontDoor(dependency.resolved, to.unit)) arrow.deep += 1;
  }
}

/** The feature -> feature cycles: Tarjan's strongly connected components of more than one feature. */
function cyclesOf(arrows, features) {
  const index = new Map();
  const low = new Map();
  const stack = [];
  const cycles = [];
  let next = 0;
  const visit = (v) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    for (const w of arrows.get(v)?.keys() ?? []) {
      if (!features.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (stack.includes(w)) low.set(v, Math.min(low.get(v), index.get(w)));
    }
    if (low.get(v) === index.get(v)) {
      const component = [];
      let w;
      do component.push((w = stack.pop()));
      while (w !== v);
      if (component.length > 1) cycles.push(component.sort());
    }
  };
  for (const feature of features) if (!index.has(feature)) visit(feature);
  return cycles;
}

const violations = result.summary.violations.filter((v) => v.rule.severity === 'error');
const lines = [];
for (const [plugin, arrows] of [...graph].sort(([a], [b]) => a.localeCompare(b))) {
  const features = new Set([...arrows.keys()].filter((unit) => unit !== 'shared' && unit !== '(root)'));
  const between = [...arrows].flatMap(([from, targets]) =>
    [...targets]
      .filter(([to]) => features.has(from) && features.has(to))
      .map(([to, arrow]) => ({ from, to, ...arrow })),
  );
  const imports = between.reduce((sum, a) => sum + a.imports, 0);
  const deep = between.reduce((sum, a) => sum + a.deep, 0);
  const cycles = cyclesOf(arrows, features);
  const own = violations.filter((v) => (unitOf(v.from) ?? unitOf(v.to))?.plugin === plugin);
  lines.push(
    `${plugin}: ${features.size} features, ${between.length} feature -> feature arrows (${imports} imports, ${deep} deep), ` +
      `${cycles.length} cycle(s), ${own.length} violation(s)`,
  );
  const width = Math.max(0, ...[...arrows.keys()].map((unit) => unit.length));
  for (const [from, targets] of [...arrows].sort(([a], [b]) => a.localeCompare(b))) {
    const to = [...targets]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([unit, a]) => `${unit} ${a.imports}${a.deep ? ` (${a.deep} deep)` : ''}`);
    lines.push(`  ${from.padEnd(width)} -> ${to.join(', ') || '-'}`);
  }
  for (const cycle of cycles) lines.push(`  cycle: ${cycle.join(' <-> ')}`);
  const byRule = new Map();
  for (const v of own) byRule.set(v.rule.name, (byRule.get(v.rule.name) ?? 0) + 1);
  if (byRule.size) lines.push(`  violations: ${[...byRule].map(([rule, n]) => `${rule} ${n}`).join(', ')}`);
  if (listViolations && own.length) {
    const byUnit = new Map();
    for (const v of own) {
      const unit = (unitOf(v.from) ?? { unit: v.from }).unit;
      const prefix = `plugins/${plugin}/src/`;
      const strip = (p) => (p.startsWith(prefix) ? p.slice(prefix.length) : p);
      const text =
        v.type === 'cycle' || v.rule.name === 'no-feature-cycle'
          ? `${v.rule.name}: ${strip(v.from)} -> ${strip(v.to)}${v.cycle ? ` (via ${v.cycle.map((c) => strip(c.name ?? c)).join(' -> ')})` : ''}`
          : `${v.rule.name}: ${strip(v.from)} -> ${strip(v.to)}`;
      byUnit.set(unit, [...(byUnit.get(unit) ?? []), text]);
    }
    for (const [unit, texts] of [...byUnit].sort(([a], [b]) => a.localeCompare(b))) {
      lines.push(`  [${unit}]`);
      for (const text of texts.sort()) lines.push(`    ${text}`);
    }
  }
}
console.log(lines.join('\n'));
