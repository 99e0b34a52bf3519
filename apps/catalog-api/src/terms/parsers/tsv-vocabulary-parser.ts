import type { NumberedLine } from './line-reader';
import type { ParsedTerm } from './parsed-term';
import { TermChecker } from './term-validation';
import { VocabularyFormatError } from './vocabulary-format-error';

const HEADER = /^(term_?id|id)\t(label|name)$/i;

/**
 * Reads `term_id<TAB>label` lines. Blank lines and `#` comments are skipped, and a header line
 * (`term_id<TAB>label` or `id<TAB>name`) is tolerated as the first data line.
 */
export async function* parseTsvVocabulary(
  lines: AsyncIterable<NumberedLine>,
): AsyncGenerator<ParsedTerm> {
  const checker = new TermChecker();
  let seenData = false;
  for await (const { text, line } of lines) {
    if (text.trim() === '' || text.trimStart().startsWith('#')) continue;
    const isFirst = !seenData;
    seenData = true;
    if (isFirst && HEADER.test(text.trim())) continue;
    const fields = text.split('\t');
    if (fields.length !== 2) {
      throw new VocabularyFormatError(
        line,
        `expected "term_id<TAB>label", found ${fields.length} tab-separated field(s)`,
      );
    }
    yield checker.check(fields[0].trim(), fields[1].trim(), line);
  }
}
