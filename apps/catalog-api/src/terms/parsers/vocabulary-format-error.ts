/**
 * A vocabulary file that cannot be loaded. Carries the 1-based line number so the operator can
 * find the problem in a file of hundreds of thousands of lines.
 */
export class VocabularyFormatError extends Error {
  constructor(
    readonly line: number,
    readonly reason: string,
  ) {
    super(`line ${line}: ${reason}`);
    this.name = 'VocabularyFormatError';
  }
}
