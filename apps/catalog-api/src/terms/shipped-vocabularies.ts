import { join } from 'node:path';
import type { TermCategory } from './term-category';

/**
 * The vocabulary files that ship with the catalog (see vocabularies/README.md). The path is
 * resolved from this file, so it works from the sources (ts-node, tests) and from a build that
 * copies the `vocabularies` folder next to the compiled module.
 */
export const SHIPPED_VOCABULARY_DIR = join(__dirname, 'vocabularies');

export function shippedVocabularyPath(category: TermCategory): string {
  return join(SHIPPED_VOCABULARY_DIR, `${category}.tsv`);
}
