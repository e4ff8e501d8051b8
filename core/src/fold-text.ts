/** Printable ASCII folds by lower-casing alone (no marks, no special casing): the common case. */
const ASCII = /^[\x20-\x7e]*$/;

/**
 * Text as searches compare it: accents dropped (NFKD, then no combining marks) and case folded fully
 * (upper then lower case, so ß is ss and ﬁ is fi). `muller` finds Müller, `ÉLO` finds Éloïse: people type
 * names without their accents.
 */
export const foldText = (text: string): string =>
  ASCII.test(text) ? text.toLowerCase() : text.normalize('NFKD').replace(/\p{M}/gu, '').toUpperCase().toLowerCase();
