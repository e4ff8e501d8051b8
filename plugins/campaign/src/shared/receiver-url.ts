import { OutboundGuard, validationError } from '@switchboard/core';

/** A tenant's receiver url the outbound guard refuses is a validation error of its field. */
export function assertReceiverUrl(guard: OutboundGuard, field: string, url: string): void {
  const problem = guard.checkUrl(url);
  if (problem) throw validationError(field, 'url', `The ${field} is refused: ${problem}`);
}
