// @ts-check
/**
 * Feature boundaries inside each plugin (docs/architecture.md, "Adding to a plugin"), checked by
 * `npm run lint:deps` (part of `npm run lint`); `npm run deps:graph` prints the feature -> feature graph.
 *
 * A feature is a direct subfolder of plugins/<plugin>/src/ other than shared/, or for campaign a subfolder of
 * its groups src/audience/ and src/content/. Its index.ts is its front door: the only file of it that the
 * rest of the plugin imports. shared/ is below every feature; the files directly in src/ (index.ts,
 * engine-parts.ts, commands.ts) are above them.
 */

/** Folders of a plugin's src/ that group features rather than being one (campaign's audience/ and content/). */
const GROUPS = 'campaign/src/(?:audience|content)';

/** A feature folder's path, without a trailing slash (no capture group of its own). */
const FEATURE = `plugins/(?:${GROUPS}/[^/]+|(?!${GROUPS}(?:/|$))[^/]+/src/(?!shared(?:/|$))[^/]+)`;

/** A file of a feature other than its front door. */
const FEATURE_INSIDE = `^${FEATURE}/(?!index\\.ts$)`;

/** The files directly in a plugin's src/: the descriptor, engine-parts.ts, commands.ts. */
const PLUGIN_ROOT_FILE = '^plugins/[^/]+/src/[^/]+$';

/** Test files and test helpers (a feature's tests/, shared/tests/). */
const TESTS = '(?:^|/)tests/|\\.test\\.ts$';

/** `from.pathNot` for a rule: what the rule itself leaves out. */
const pending = (...more) => (more.length ? { pathNot: more } : {});

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-deep-import',
      comment:
        "A feature imports another feature only through its front door (its index.ts), never one of the other feature's files.",
      severity: 'error',
      from: { path: `^(${FEATURE})/`, ...pending() },
      to: { path: FEATURE_INSIDE, pathNot: '^$1/' },
    },
    {
      name: 'no-deep-import-from-plugin-root',
      comment:
        "The plugin's own files (index.ts, engine-parts.ts, commands.ts) import a feature only through its front door (index.ts).",
      severity: 'error',
      from: { path: PLUGIN_ROOT_FILE, ...pending() },
      to: { path: FEATURE_INSIDE },
    },
    {
      name: 'shared-not-to-features',
      comment:
        'shared/ (its test helpers too) is below every feature: it imports no feature. What it would need belongs in shared/ itself.',
      severity: 'error',
      from: { path: '^plugins/[^/]+/src/shared/', ...pending() },
      to: { path: `^${FEATURE}/` },
    },
    {
      name: 'not-to-plugin-root',
      comment:
        "A feature or shared/ does not import the plugin's own files (index.ts, engine-parts.ts, commands.ts), which import the features; tests may (the descriptor).",
      severity: 'error',
      from: { path: '^plugins/[^/]+/src/[^/]+/', ...pending(TESTS) },
      to: { path: PLUGIN_ROOT_FILE },
    },
    {
      name: 'no-feature-cycle',
      comment:
        'No cycle between feature folders: if A imports B (any file of A, tests included), nothing in B leads back to A.',
      severity: 'error',
      scope: 'folder',
      from: { path: `^${FEATURE}$`, ...pending() },
      to: { path: `^${FEATURE}$`, circular: true },
    },
  ],
  options: {
    // Only the plugins' sources make the graph: core, other packages and node_modules are left out.
    includeOnly: '^plugins/[^/]+/src/',
    tsConfig: { fileName: 'tsconfig.base.json' },
    // `import type` counts: a type is part of a feature's front door as much as a value.
    tsPreCompilationDeps: true,
  },
};

// Not an option of dependency-cruiser (so hidden from its schema check): the feature pattern, for tools/deps-graph.mjs.
Object.defineProperty(module.exports, 'featurePattern', { value: FEATURE });
