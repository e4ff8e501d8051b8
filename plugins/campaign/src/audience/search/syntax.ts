import { validationError } from '@switchboard/core';
import { normalizeEmail } from '../../shared/email';
import { isSubscriberStatus, SUBSCRIBER_STATUSES, SubscriberStatus } from '../../shared/subscriber-statuses';

export interface SubscriberSearch {
  /** Exact addresses (`email:` and plain words that are addresses): each must be the subscriber's. */
  emails: string[];
  /** The `name:` value: a substring of the name, or word prefixes where a part ends in `*` (search/terms.ts). */
  name?: string;
  listCode?: string;
  status?: SubscriberStatus;
  /** Subscribers created on a later day than this (UTC): `created:>2024-01-31` starts at Feb 1. */
  createdAfter?: Date;
  meta: Array<{ key: string; value: string }>;
  /** Plain words (a quoted phrase gives its words): each a substring of the email or the name, or a `word*` prefix. */
  words: string[];
}

const OPERATORS = ['email:', 'name:', 'list:', 'status:', 'created:>', 'meta.<key>:'];
/** Distinct terms one search may hold: each one is a filter, and each filter is work per candidate. */
export const MAX_SEARCH_TERMS = 16;
// An operator with a quoted value, a quoted phrase, or a bare term.
const TERM = /([A-Za-z_][\w.-]*:>?)"([^"]*)"|"([^"]*)"|(\S+)/g;
const META_KEY = /^[A-Za-z0-9_-]{1,64}$/;

const EMAIL = /^[^\s@]+@[^\s@]+$/;

const fail = (operator: string, expected: string, got: string) =>
  validationError('search', 'operator', `Search operator ${operator} expects ${expected}, got "${got}"`);

/** The last instant a DATETIME(3) holds: 9999-12-31T23:59:59.999Z. */
const LAST_DATETIME = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/**
 * An operator that names one value (a name part, a list, a status, a date) given twice with two values: a
 * 422, rather than the last one alone (`name:zzzz name:hans` found Hans; session 27). The same value again
 * counts once, as any repeated term.
 */
function once<K extends 'name' | 'listCode' | 'status' | 'createdAfter'>(
  search: SubscriberSearch,
  field: K,
  value: NonNullable<SubscriberSearch[K]>,
  operator: string,
): void {
  const had = search[field];
  if (
    had !== undefined &&
    String(had instanceof Date ? had.getTime() : had) !== String(value instanceof Date ? value.getTime() : value)
  )
    throw validationError('search', 'operator', `Search operator ${operator} may be given once`);
  search[field] = value;
}

function applyOperator(search: SubscriberSearch, name: string, value: string): void {
  if (name === 'email:') {
    // Exact match of the normalized value, whatever it is: `email:ada` is a search that finds nobody.
    if (!value.trim()) throw fail('email:', 'an email address', value);
    search.emails.push(normalizeEmail(value));
  } else if (name === 'name:') {
    if (!value) throw fail('name:', 'some text', value);
    once(search, 'name', value.toLowerCase(), name);
  } else if (name === 'list:') {
    if (!value) throw fail('list:', 'a list code', value);
    once(search, 'listCode', value, name);
  } else if (name === 'status:') {
    if (!isSubscriberStatus(value)) throw fail('status:', SUBSCRIBER_STATUSES.join(', '), value);
    once(search, 'status', value, name);
  } else if (name === 'created:>') {
    const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
    const day = match ? new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]))) : null;
    if (!day || day.toISOString().slice(0, 10) !== value) throw fail('created:>', 'a date YYYY-MM-DD', value);
    // After 9999-12-31 is year 10000, which MariaDB compares wrongly (it matched a subscriber of 2026): the
    // last instant a DATETIME holds, which no subscriber was created at.
    once(search, 'createdAfter', new Date(Math.min(day.getTime() + 86_400_000, LAST_DATETIME)), name);
  } else if (name.startsWith('meta.') && name.endsWith(':') && !name.endsWith(':>')) {
    const key = name.slice(5, -1);
    if (!META_KEY.test(key)) throw fail('meta.<key>:', 'a key of letters, digits, _ or -', key);
    if (!value) throw fail(`meta.${key}:`, 'a value', value);
    search.meta.push({ key, value });
  } else if (name === 'created:') {
    throw fail('created:', '>YYYY-MM-DD', value);
  } else {
    throw validationError('search', 'operator', `Unknown search operator ${name} (known: ${OPERATORS.join(' ')})`);
  }
}

/** A plain word that is an email address is matched as the whole address, like `email:`. */
function addWord(search: SubscriberSearch, word: string): void {
  if (EMAIL.test(word)) search.emails.push(normalizeEmail(word));
  else search.words.push(word.toLowerCase());
}

/** Parses `email:a@b.co list:vip "quoted words" meta.plan:"pro plus" ada`. */
export function parseSearch(text: string | undefined): SubscriberSearch {
  const search: SubscriberSearch = { emails: [], meta: [], words: [] };
  if (!text?.trim()) return search;
  if ((text.match(/"/g) ?? []).length % 2 === 1) {
    throw validationError('search', 'syntax', 'Search has an unmatched double quote');
  }
  for (const match of text.matchAll(TERM)) {
    const [, quotedOperator, quotedValue, phrase, bare] = match;
    if (quotedOperator !== undefined) applyOperator(search, quotedOperator, quotedValue);
    else if (phrase !== undefined) {
      for (const word of phrase.split(/\s+/).filter(Boolean)) addWord(search, word);
    } else {
      const operator = /^([A-Za-z_][\w.-]*:>?)(.*)$/.exec(bare);
      if (operator) applyOperator(search, operator[1], operator[2]);
      else addWord(search, bare);
    }
  }
  return withinBounds(deduplicated(search));
}

const unique = <T>(values: T[], key: (value: T) => string = String) => [
  ...new Map(values.map((v) => [key(v), v])).values(),
];

/** The same term twice filters the same way once. */
function deduplicated(search: SubscriberSearch): SubscriberSearch {
  return {
    ...search,
    emails: unique(search.emails),
    meta: unique(search.meta, (m) => `${m.key}\u0000${m.value}`),
    words: unique(search.words),
  };
}

function withinBounds(search: SubscriberSearch): SubscriberSearch {
  const terms =
    search.emails.length +
    search.meta.length +
    search.words.length +
    [search.name, search.listCode, search.status, search.createdAfter].filter((t) => t !== undefined).length;
  if (terms > MAX_SEARCH_TERMS) {
    throw validationError(
      'search',
      'max_terms',
      `Search has ${terms} different terms; at most ${MAX_SEARCH_TERMS} are allowed`,
    );
  }
  return search;
}
