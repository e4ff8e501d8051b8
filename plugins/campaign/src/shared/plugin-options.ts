/**
 * One group of the plugin's options as its services take it: the schema's defaults, then what the config
 * gives. The plugin loader fills the same defaults when it validates a config; engines built in tests may
 * hand options over unvalidated.
 */
export function withDefaults<T>(
  schema: { properties: Record<string, { default?: unknown }> },
  given: Partial<T> | undefined,
): T {
  const defaults = Object.fromEntries(Object.entries(schema.properties).map(([name, p]) => [name, p.default]));
  return { ...defaults, ...given } as T;
}
