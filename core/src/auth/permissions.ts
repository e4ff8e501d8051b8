const ACTIONS = ['read', 'write', '*'];

/** Every resource the enabled plugins declare, each once, sorted: what a token can be granted. */
export function knownResources(plugins: readonly { resources?: readonly string[] }[]): string[] {
  return [...new Set(plugins.flatMap((p) => p.resources ?? []))].sort();
}

/**
 * Why a permission string is malformed or names a resource no enabled plugin declares, or null when
 * it is fine. Permissions are `resource:read|write`, `resource:*` or `*`.
 */
export function permissionProblem(permission: string, resources: readonly string[]): string | null {
  if (permission === '*') return null;
  const [resource, action, extra] = permission.split(':');
  if (extra !== undefined || !resource || !action) return `"${permission}" is not resource:action`;
  if (!resources.includes(resource)) {
    return `unknown resource "${resource}" (known: ${resources.join(', ') || 'none: no enabled plugin declares one'})`;
  }
  if (!ACTIONS.includes(action)) return `unknown action "${action}" (read, write or *)`;
  return null;
}

/** `write` includes `read`: a token that may change a resource may also see it. */
export function grants(granted: readonly string[], required: string): boolean {
  const [resource, action] = required.split(':');
  return granted.some(
    (g) => g === '*' || g === required || g === `${resource}:*` || (action === 'read' && g === `${resource}:write`),
  );
}
