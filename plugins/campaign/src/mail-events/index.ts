export { MailEventLedger } from './ledger';
export { COUNTERS, FIRSTS } from './mail-event';
export type { MailEvent, MailEventSource } from './mail-event';
export { replayCounted, messageCounterOf, pages } from './replay';
export type { CountedEvent } from './replay';
export { TimelineCounts } from './timelines';
