export { MailEventLedger } from './ledger';
export { COUNTERS } from './mail-event';
export type { MailEvent, MailEventSource } from './mail-event';
export { replayCounted, pages } from './replay';
export type { CountedEvent } from './replay';
export { addToTimelines } from './timelines';
