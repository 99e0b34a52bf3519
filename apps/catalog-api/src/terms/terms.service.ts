import { Injectable } from '@nestjs/common';
import type { Readable } from 'node:stream';
import { DataSource } from 'typeorm';
import { BadRequestError, NotFoundError } from '@app/errors';
import { VOCABULARY_FORMATS, type VocabularyFormat } from './parsers/parse-vocabulary';
import { VocabularyFormatError } from './parsers/vocabulary-format-error';
import { isTermCategory, TERM_CATEGORIES, type TermCategory } from './term-category';
import {
  loadShippedVocabularies,
  loadVocabulary,
  type VocabularyLoadCounts,
} from './vocabulary-loader';

/**
 * Loads and refreshes the term vocabularies. Used by `POST /api/admin/terms/{category}`, the
 * command-line tool and the demo-data seeding; client mistakes become 4xx errors here.
 */
@Injectable()
export class TermsService {
  constructor(private readonly dataSource: DataSource) {}

  async loadVocabulary(
    category: string,
    source: string | Readable,
    format: string,
  ): Promise<VocabularyLoadCounts> {
    const known = this.requireCategory(category);
    const parsedFormat = this.requireFormat(format);
    try {
      return await loadVocabulary(this.dataSource, known, source, parsedFormat);
    } catch (error) {
      if (error instanceof VocabularyFormatError) {
        throw new BadRequestError(`Invalid vocabulary file: ${error.message}`, {
          errors: [{ line: error.line, message: error.reason }],
        });
      }
      throw error;
    }
  }

  loadShippedVocabularies(): Promise<Record<TermCategory, VocabularyLoadCounts>> {
    return loadShippedVocabularies(this.dataSource);
  }

  private requireCategory(category: string): TermCategory {
    if (!isTermCategory(category)) {
      throw new NotFoundError(`Unknown term category "${category}"`, {
        categories: [...TERM_CATEGORIES],
      });
    }
    return category;
  }

  private requireFormat(format: string): VocabularyFormat {
    if (!(VOCABULARY_FORMATS as readonly string[]).includes(format)) {
      throw new BadRequestError(`Unknown vocabulary format "${format}"`, {
        formats: [...VOCABULARY_FORMATS],
      });
    }
    return format as VocabularyFormat;
  }
}
