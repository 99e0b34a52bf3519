import type { Readable } from 'node:stream';
import { readLines } from './line-reader';
import { parseOboVocabulary } from './obo-vocabulary-parser';
import type { ParsedTerm } from './parsed-term';
import { parseTsvVocabulary } from './tsv-vocabulary-parser';

export const VOCABULARY_FORMATS = ['obo', 'tsv'] as const;

export type VocabularyFormat = (typeof VOCABULARY_FORMATS)[number];

/** Streams the terms of a vocabulary file given as text or as a byte stream. */
export function parseVocabulary(
  source: string | Readable,
  format: VocabularyFormat,
): AsyncGenerator<ParsedTerm> {
  const lines = readLines(source);
  return format === 'obo' ? parseOboVocabulary(lines) : parseTsvVocabulary(lines);
}
