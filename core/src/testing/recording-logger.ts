import pino from 'pino';
import type { Logger } from '../logger';

export interface LogEntry {
  level: number;
  msg?: string;
  [key: string]: unknown;
}

/** A pino logger that keeps every line it writes (warn and above by default), for tests to read. */
export function recordingLogger(level = 'warn'): { logger: Logger; entries: LogEntry[]; errors(): LogEntry[] } {
  const entries: LogEntry[] = [];
  const logger = pino({ level }, { write: (line: string) => entries.push(JSON.parse(line) as LogEntry) });
  return { logger, entries, errors: () => entries.filter((e) => e.level >= pino.levels.values.error) };
}
