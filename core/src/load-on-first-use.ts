/**
 * A module required when first asked for rather than when this file loads, so that a command loads only
 * the drivers and libraries it uses (`switchboard --help` loads none; docs/performance-history.md, "CLI start-up").
 * Written `loadOnFirstUse(() => require('knex') as typeof import('knex'))`, the module keeps its types.
 */
export function loadOnFirstUse<T>(load: () => T): () => T {
  let loaded: T | undefined;
  return () => (loaded ??= load());
}
