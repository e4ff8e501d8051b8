/**
 * Merge tags: `{{first_name}}`, `{{ subscriber.first_name }}`, `{{meta.city}}`, with an optional fallback
 * `{{ first_name | "there" }}`. A template is split once per send and filled per recipient from plain
 * values only: no expression is evaluated, and a name reads nothing but the fields below and the
 * subscriber's own meta_data keys (docs/decisions.md, Sending).
 */
const TAG = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_-]+)*)\s*(?:\|\s*"([^"{}]*)"\s*)?\}\}/g;

export const SUBSCRIBER_FIELDS = ['email', 'first_name', 'last_name', 'company_name', 'phone', 'job_title'] as const;

export interface MergeValues {
  subscriber: Partial<Record<(typeof SUBSCRIBER_FIELDS)[number], string | null>> & {
    meta: Record<string, unknown>;
  };
  /** Links of this mail: unsubscribe_url. */
  links: Record<string, string>;
}

/** Whether a template places the tag of `name` (`{{unsubscribe_url}}`, `{{ unsubscribe_url | "x" }}`). */
export const placesTag = (source: string, name: string): boolean =>
  [...source.matchAll(TAG)].some((m) => m[1] === name);

/**
 * `source` put through `transform` (an HTML-to-text conversion) with its merge tags kept as written: each
 * stands in as one word of private-use characters, which no case change, wrapping or spacing alters.
 */
export function withTagsKept(source: string, transform: (text: string) => string): string {
  // One stand-in per distinct tag: a link whose text is its own href stays one (hideLinkHrefIfSameAsText).
  const tags: string[] = [];
  const indexOf = new Map<string, number>();
  const standIn = source.replace(TAG, (tag) => {
    const i = indexOf.get(tag) ?? indexOf.set(tag, tags.push(tag) - 1).get(tag)!;
    return `\uE000${String.fromCharCode(0xe100 + i)}\uE001`;
  });
  if (!tags.length || tags.length > 0xe00) return transform(source);
  return transform(standIn).replace(/\uE000([\uE100-\uEEFF])\uE001/g, (_, c: string) => tags[c.charCodeAt(0) - 0xe100]);
}

type Part = string | { path: string[]; fallback: string };

export type Template = (values: MergeValues, escape: (s: string) => string) => string;

export function compileTemplate(source: string): Template {
  const parts: Part[] = [];
  let last = 0;
  for (const m of source.matchAll(TAG)) {
    parts.push(source.slice(last, m.index), { path: m[1].split('.'), fallback: m[2] ?? '' });
    last = m.index! + m[0].length;
  }
  parts.push(source.slice(last));
  if (parts.length === 1) return () => source;
  return (values, escape) => {
    let out = '';
    for (const part of parts) {
      if (typeof part === 'string') out += part;
      else {
        const value = lookup(values, part.path);
        out += escape(value === undefined || value === '' ? part.fallback : value);
      }
    }
    return out;
  };
}

const own = (object: Record<string, unknown>, key: string) =>
  Object.prototype.hasOwnProperty.call(object, key) ? object[key] : undefined;

/** A tag's text, or undefined when the name is not one a template may read. */
function lookup(values: MergeValues, path: string[]): string | undefined {
  const [head, ...rest] = path[0] === 'subscriber' ? path.slice(1) : path;
  if (head === undefined) return undefined;
  if (head === 'meta') {
    const value = rest.length === 1 ? own(values.subscriber.meta, rest[0]) : undefined;
    if (Array.isArray(value)) return value.filter((v) => typeof v !== 'object').join(', ');
    return value === null || typeof value === 'object' || value === undefined ? undefined : String(value);
  }
  if (rest.length) return undefined;
  if ((SUBSCRIBER_FIELDS as readonly string[]).includes(head)) return values.subscriber[head as 'email'] ?? undefined;
  if (path[0] !== 'subscriber') return own(values.links, head) as string | undefined;
  return undefined;
}

export const verbatim = (s: string) => s;
