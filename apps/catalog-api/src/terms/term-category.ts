/** The four vocabularies of the catalog; the database CHECK constraint lists the same names. */
export const TERM_CATEGORIES = ['disease', 'phenotype', 'study', 'gene'] as const;

export type TermCategory = (typeof TERM_CATEGORIES)[number];

export function isTermCategory(value: string): value is TermCategory {
  return (TERM_CATEGORIES as readonly string[]).includes(value);
}
