/** Resources a token can be granted, `resource:read|write`, `resource:*` or `*`. */
export const RESOURCES = [
  'subscribers',
  'lists',
  'messages',
  'schedules',
  'sender-profiles',
  'analytics',
  'webhooks',
  'inbound-webhooks',
  'changelog',
  'users',
  'projects',
] as const;

const ACTIONS = ['read', 'write', '*'];

/** Why a permission string is malformed, or null when it is fine. */
export function permissionProblem(permission: string): string | null {
  if (permission === '*') return null;
  const [resource, action, extra] = permission.split(':');
  if (extra !== undefined || !resource || !action) return `"${permission}" is not resource:action`;
  if (!(RESOURCES as readonly string[]).includes(resource)) return `unknown resource "${resource}" (known: ${RESOURCES.join(', ')})`;
  if (!ACTIONS.includes(action)) return `unknown action "${action}" (read, write or *)`;
  return null;
}

/** `write` includes `read`: a token that may change a resource may also see it. */
export function grants(granted: readonly string[], required: string): boolean {
  const [resource, action] = required.split(':');
  return granted.some(
    (g) =>
      g === '*' ||
      g === required ||
      g === `${resource}:*` ||
      (action === 'read' && g === `${resource}:write`),
  );
}
