/** Printable ASCII folds by lower-casing alone (no marks, no special casing): the import's common case. */
const ASCII = /^[\x20-\x7e]*$/;

/**
 * Search text as it is compared: accents dropped (NFKD, then no combining marks) and case folded fully
 * (upper then lower case, so ß is ss and ﬁ is fi). `name:muller` finds Müller, `name:ÉLO` finds Éloïse.
 */
export const fold = (text: string): string =>
  ASCII.test(text) ? text.toLowerCase() : text.normalize('NFKD').replace(/\p{M}/gu, '').toUpperCase().toLowerCase();

/** The folded texts a substring term is looked for in. */
export interface SearchTexts {
  /** "first last" (either alone when the other is empty). */
  name: string;
  email: string;
}

export const searchTexts = (s: { email: string; first_name?: string | null; last_name?: string | null }) => ({
  name: fold([s.first_name, s.last_name].filter(Boolean).join(' ')),
  email: fold(s.email),
});
