const WORD = /[\p{L}\p{N}]+/gu;
const MAX = 64;

const wordsOf = (text: string | null | undefined) => (text ? (text.toLowerCase().match(WORD) ?? []) : []);

/** Search words of a subscriber as [kind, word]: name words, and the email's local part, its pieces and its domain. */
export function subscriberSearchWords(s: {
  email: string;
  first_name?: string | null;
  last_name?: string | null;
}): Array<[kind: 'n' | 'e', word: string]> {
  const out = new Map<string, ['n' | 'e', string]>();
  const add = (kind: 'n' | 'e', word: string) => {
    const cut = word.slice(0, MAX);
    if (cut) out.set(kind + cut, [kind, cut]);
  };
  for (const w of wordsOf(s.first_name)) add('n', w);
  for (const w of wordsOf(s.last_name)) add('n', w);
  const email = s.email.toLowerCase();
  const at = email.lastIndexOf('@');
  const local = email.slice(0, at);
  add('e', local);
  add('e', email.slice(at + 1));
  // Pieces of a local part like ada.lovelace, so "lovelace" finds it too.
  const pieces = wordsOf(local);
  if (pieces.length > 1) for (const w of pieces) add('e', w);
  return [...out.values()];
}

export interface WordMatch {
  word: string;
  /** A trailing * asks for every word starting with the text (not index-ordered: slower). */
  prefix: boolean;
}

const match = (text: string): WordMatch =>
  text.endsWith('*')
    ? { word: text.slice(0, -1).slice(0, MAX), prefix: true }
    : { word: text.slice(0, MAX), prefix: false };

/** The word prefixes of one `name:` part ending in `*`, each word of it a prefix (`o'br*`: o* and br*). */
export const prefixMatch = (part: string): WordMatch[] => wordsOf(part).map((w) => match(`${w}*`));

/** A plain `word*` prefix, against name words and email pieces. */
export const plainMatch = (word: string): WordMatch => match(word.toLowerCase());
