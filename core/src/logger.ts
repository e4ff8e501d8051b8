import type { Logger } from 'pino';
import { loadOnFirstUse } from './load-on-first-use';

const pinoModule = loadOnFirstUse(() => require('pino') as typeof import('pino'));

export type { Logger };

/** JSON lines on stdout (a process that serves), or on stderr (a command whose stdout is its answer, e.g. --json). */
export function createLogger(level: string, to: 'stdout' | 'stderr' = 'stdout'): Logger {
  const { pino, stdTimeFunctions, destination } = pinoModule();
  const options = { level, base: { service: 'switchboard' }, timestamp: stdTimeFunctions.isoTime };
  return to === 'stdout' ? pino(options) : pino(options, destination(2));
}
