import {
  MAX_LABEL_BYTES,
  MAX_LABEL_LENGTH,
  MAX_TERM_ID_LENGTH,
  type ParsedTerm,
} from './parsed-term';
import { VocabularyFormatError } from './vocabulary-format-error';

/**
 * Checks one entry and remembers its id, so that a second entry with the same id is reported
 * (an upsert would otherwise silently keep whichever came last). The set grows with the number
 * of distinct ids, not with the file: about 20 MB for the largest public vocabulary.
 */
export class TermChecker {
  private readonly firstLineOf = new Map<string, number>();

  check(termId: string, label: string, line: number): ParsedTerm {
    if (termId.length === 0) throw new VocabularyFormatError(line, 'the term id is empty');
    if (/\s/.test(termId)) {
      throw new VocabularyFormatError(line, `the term id "${termId}" contains whitespace`);
    }
    if (termId.length > MAX_TERM_ID_LENGTH) {
      throw new VocabularyFormatError(
        line,
        `the term id is longer than ${MAX_TERM_ID_LENGTH} characters`,
      );
    }
    if (label.length === 0)
      throw new VocabularyFormatError(line, `the label of ${termId} is empty`);
    if (label.length > MAX_LABEL_LENGTH) {
      throw new VocabularyFormatError(
        line,
        `the label of ${termId} is longer than ${MAX_LABEL_LENGTH} characters`,
      );
    }
    if (
      Buffer.byteLength(label) > MAX_LABEL_BYTES ||
      Buffer.byteLength(label.toLowerCase()) > MAX_LABEL_BYTES
    ) {
      throw new VocabularyFormatError(
        line,
        `the label of ${termId} is longer than ${MAX_LABEL_BYTES} bytes of UTF-8`,
      );
    }
    const first = this.firstLineOf.get(termId);
    if (first !== undefined) {
      throw new VocabularyFormatError(
        line,
        `duplicate term id ${termId} (first seen on line ${first})`,
      );
    }
    this.firstLineOf.set(termId, line);
    return { termId, label, line };
  }
}
