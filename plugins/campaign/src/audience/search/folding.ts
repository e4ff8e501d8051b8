import { foldText as fold } from '@switchboard/core';

export { fold };

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
