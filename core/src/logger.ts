import type { DestinationStream, Logger } from 'pino';
import { loadOnFirstUse } from './load-on-first-use';

const pinoModule = loadOnFirstUse(() => require('pino') as typeof import('pino'));

export type { Logger };

/**
 * Fields censored wherever a log call puts them, at the top or one level down (`{ err }`, `{ req }`,
 * `{ options }`): no call is meant to pass a secret, and this holds when one does by mistake.
 */
export const REDACTED_FIELDS = ['authorization', 'password', 'secret', 'token', 'apiKey', 'api_key', 'appKey'].flatMap(
  (key) => [key, `*.${key}`, `*.headers.${key}`],
);

/** JSON lines on stdout (a process that serves), or on stderr (a command whose stdout is its answer, e.g. --json). */
export function createLogger(level: string, to: 'stdout' | 'stderr' | DestinationStream = 'stdout'): Logger {
  const { pino, stdTimeFunctions, destination } = pinoModule();
  const options = {
    level,
    base: { service: 'switchboard' },
    timestamp: stdTimeFunctions.isoTime,
    redact: { paths: REDACTED_FIELDS, censor: '[redacted]' },
  };
  if (to === 'stdout') return pino(options);
  return pino(options, to === 'stderr' ? destination(2) : to);
}
