import type { Logger } from 'pino';
import { loadOnFirstUse } from './load-on-first-use';

const pinoModule = loadOnFirstUse(() => require('pino') as typeof import('pino'));

export type { Logger };

export function createLogger(level: string): Logger {
  const { pino, stdTimeFunctions } = pinoModule();
  return pino({ level, base: { service: 'switchboard' }, timestamp: stdTimeFunctions.isoTime });
}
