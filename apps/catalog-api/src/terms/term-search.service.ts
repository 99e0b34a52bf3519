import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { ValidationFailedError } from '@app/errors';
import type { TermCategory } from './term-category';
import { TERM_PAGE_SIZE, TermSearchResult, TermsRepository } from './terms.repository';

export interface TermSearchPage {
  results: TermSearchResult[];
  pagination: { more: boolean };
}

@Injectable()
export class TermSearchService {
  constructor(private readonly terms: TermsRepository) {}

  async search(
    manager: EntityManager,
    category: TermCategory,
    search: string,
    page: number,
  ): Promise<TermSearchPage> {
    const offset = (page - 1) * TERM_PAGE_SIZE;
    const needed = offset + TERM_PAGE_SIZE + 1;
    const rows = await this.terms.searchPage(manager, category, search, offset, needed);
    if (rows.length === 0 && page > 1) {
      throw new ValidationFailedError([
        { parameter: 'page', message: 'is past the last page of results' },
      ]);
    }
    return {
      results: rows
        .slice(0, TERM_PAGE_SIZE)
        .map((row) => ({ id: row.id, text: row.text, term_id: row.term_id })),
      pagination: { more: rows.length > TERM_PAGE_SIZE },
    };
  }
}
