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
  if (pending + paused === 0) return `All ${servers(up)} up`;
  // The first count names what it counts ("1 server not checked yet"), the others follow it.
  const parts: string[] = [];
  const add = (n: number, what: string) => n && parts.push(`${parts.length ? n : servers(n)} ${what}`);
  add(up, 'up');
  add(pending, 'not checked yet');
  add(paused, 'paused');
  return parts.join(', ');
}
