import pino, { Logger } from 'pino';

export type { Logger };

export function createLogger(level: string): Logger {
  return pino({ level, base: { service: 'switchboard' }, timestamp: pino.stdTimeFunctions.isoTime });
}
