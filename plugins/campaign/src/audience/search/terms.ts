import { fold } from './folding';
import type { SubstringTerm } from './substring';
import type { SubscriberSearch } from './syntax';

const WORD = /[\p{L}\p{N}]+/gu;

/**
 * The text filters of a search, each a substring term of the index. `name:ada` and a plain `ada` are
 * substrings (of the name; of the name or the email); a part ending in `*` is a word prefix, a
 * substring that must start a word. `name:"ada lov"` is one substring, spaces included;
 * `name:"ada lov*"` is the substring "ada" and the prefix "lov"; `name:o'br*` the prefixes o and br.
 * Repeated terms count once.
 */
export function searchTerms(search: SubscriberSearch): SubstringTerm[] {
  const terms: SubstringTerm[] = [];
  const add = (text: string, scope: SubstringTerm['scope'], wordStart: boolean) => {
    const folded = fold(text);
    if (folded && !terms.some((t) => t.text === folded && t.scope === scope && t.wordStart === wordStart))
      terms.push({ text: folded, scope, wordStart });
  };
  if (search.name !== undefined) {
    const parts = search.name.trim().split(/\s+/);
    if (!parts.some((p) => p.endsWith('*'))) add(parts.join(' '), 'name', false);
    else
      for (const part of parts) {
        if (!part.endsWith('*')) add(part, 'name', false);
        else for (const word of fold(part).match(WORD) ?? []) add(word, 'name', true);
      }
  }
  for (const word of search.words) {
    if (word.endsWith('*')) add(word.slice(0, -1), 'any', true);
    else add(word, 'any', false);
  }
  return terms;
}
