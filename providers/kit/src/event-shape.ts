import { EVENT_TYPES, type NormalizedEvent } from './types';

const TYPES = new Set<string>(EVENT_TYPES);
const isId = (v: unknown) => v === null || (typeof v === 'number' && Number.isSafeInteger(v) && v > 0);
const isText = (v: unknown) => v === null || typeof v === 'string';

/**
 * What is wrong with an event an adapter's `normalize` returned, against NormalizedEvent; null when nothing
 * is. Fields that may be null may also be left out. The host refuses a request whose events break it (an
 * adapter's bug, a 500 the provider retries once the adapter is fixed), and the contract suite runs it on
 * every fixture, so an adapter learns it before the host does.
 */
export function eventProblem(event: unknown): string | null {
  if (typeof event !== 'object' || event === null || Array.isArray(event)) return 'is not an object';
  const e = event as Record<string, unknown>;
  if (typeof e.type !== 'string' || !TYPES.has(e.type)) return `type ${JSON.stringify(e.type)} is none of EVENT_TYPES`;
  if (e.bounce !== undefined && e.bounce !== 'hard' && e.bounce !== 'soft') return 'bounce is neither hard nor soft';
  if (typeof e.providerEventId !== 'string' || !e.providerEventId) return 'providerEventId is not a non-empty string';
  if (!(e.occurredAt instanceof Date) || Number.isNaN(e.occurredAt.getTime())) return 'occurredAt is not a valid Date';
  for (const name of ['messageId', 'subscriberId'])
    if (e[name] !== undefined && !isId(e[name])) return `${name} is neither a positive integer nor null`;
  for (const name of ['recipient', 'providerMessageId', 'messageIdHeader'])
    if (e[name] !== undefined && !isText(e[name])) return `${name} is neither a string nor null`;
  if (e.url !== undefined && typeof e.url !== 'string') return 'url is not a string';
  return null;
}

/**
 * An adapter's events as the host records them (left-out nullable fields null), or an Error naming the
 * first that breaks NormalizedEvent.
 */
export function checkedEvents(adapterKey: string, events: unknown): NormalizedEvent[] {
  if (!Array.isArray(events)) throw new Error(`Provider adapter ${adapterKey}: normalize returned no array`);
  events.forEach((event, i) => {
    const problem = eventProblem(event);
    if (problem) throw new Error(`Provider adapter ${adapterKey}: event ${i} ${problem}`);
  });
  return (events as NormalizedEvent[]).map((e) =>
    e.messageId === undefined ||
    e.subscriberId === undefined ||
    e.recipient === undefined ||
    e.providerMessageId === undefined
      ? {
          ...e,
          messageId: e.messageId ?? null,
          subscriberId: e.subscriberId ?? null,
          recipient: e.recipient ?? null,
          providerMessageId: e.providerMessageId ?? null,
        }
      : e,
  );
}
