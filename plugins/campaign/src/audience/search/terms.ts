import { fold } from './folding';
import { plainMatch, prefixMatch, WordMatch } from './words';
import type { SubstringTerm } from './substring';
import type { SubscriberSearch } from './syntax';

/** A `word*` prefix: some word of the name (kinds n) or of the name or email (n and e) starts with it. */
export interface WordFilter {
  kinds: string[];
  m: WordMatch;
}

/**
 * The text filters of a search. `name:ada` and a plain `ada` are substrings (of the name; of the name
 * or the email); a part ending in `*` is a word prefix. `name:"ada lov"` is one substring, spaces
 * included; `name:"ada lov*"` is the substring "ada" and the prefix "lov".
 */
export function searchTerms(search: SubscriberSearch): { prefixes: WordFilter[]; substrings: SubstringTerm[] } {
  const prefixes: WordFilter[] = [];
  const substrings: SubstringTerm[] = [];
  const addSubstring = (text: string, scope: SubstringTerm['scope']) => {
    const folded = fold(text);
    if (folded && !substrings.some((t) => t.text === folded && t.scope === scope))
      substrings.push({ text: folded, scope });
  };
  if (search.name !== undefined) {
    const parts = search.name.trim().split(/\s+/);
    if (!parts.some((p) => p.endsWith('*'))) addSubstring(parts.join(' '), 'name');
    else
      for (const part of parts) {
        if (part.endsWith('*')) prefixes.push(...prefixMatch(part).map((m) => ({ kinds: ['n'], m })));
        else addSubstring(part, 'name');
      }
  }
  for (const word of search.words) {
    if (word.endsWith('*')) prefixes.push({ kinds: ['n', 'e'], m: plainMatch(word) });
    else addSubstring(word, 'any');
  }
  return { prefixes, substrings };
}
