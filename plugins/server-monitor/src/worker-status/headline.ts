import type { OnCall } from './on-call';
import type { ServerState } from '../shared/active-servers';

const servers = (n: number) => `${n} ${n === 1 ? 'server' : 'servers'}`;

/**
 * The dashboard's first line: what is down, else whether anything needs a look, else how many servers are
 * up. Servers not checked yet and paused ones are counted apart: "All 3 servers up" must never include a
 * server nobody has checked.
 */
export function headlineOf(onCall: OnCall): string {
  const total = (state: ServerState) => onCall.counts.reduce((n, c) => n + c[state], 0);
  if (onCall.down.total > 0) return `${servers(onCall.down.total)} down`;
  if (onCall.unheard.total + onCall.heartbeats.total > 0) return 'Attention needed';
  const [up, pending, paused] = [total('up'), total('pending'), total('paused')];
  if (up + pending + paused === 0) return 'No servers yet';
  const apart = [pending && `${pending} not checked yet`, paused && `${paused} paused`].filter(Boolean);
  const head = pending + paused === 0 ? `All ${servers(up)} up` : `${servers(up)} up`;
  return apart.length ? `${head}, ${apart.join(', ')}` : head;
}
