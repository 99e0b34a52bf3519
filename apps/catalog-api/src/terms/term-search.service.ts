import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ValidationFailedError } from '@app/errors';
import type { TermCategory } from './term-category';

export const TERM_PAGE_SIZE = 25;

export interface TermSearchResult {
  id: number;
  text: string;
  term_id: string;
}

export interface TermSearchPage {
  results: TermSearchResult[];
  pagination: { more: boolean };
}

/**
 * Case-insensitive substring match ranked exact > prefix > anywhere, then by label (lower-cased,
 * byte order "C", so the order is the same on every server), then id.
 *
 * Each rank is its own sub-query with its own ORDER BY … LIMIT, so Postgres can stop early:
 * a common substring ("e") walks IDX_terms_category_label in label order and stops after one
 * page, a rare one ("parkinson") is found through the trigram index and only its few rows are
 * sorted. A single query ordered by a CASE expression would rank every matching row first
 * (120 ms for "e" over 100,000 terms against under 1 ms this way; docs/decisions-terms.md).
 * One row more than a page is fetched to know whether another page exists (no count query).
 */
const SEARCH_SQL = `
  SELECT id, text, term_id FROM (
    (SELECT id, label AS text, term_id, 0 AS rank, lower(label) COLLATE "C" AS sort_label
       FROM terms
      WHERE category = $1 AND lower(label) COLLATE "C" = lower($3)
      ORDER BY lower(label) COLLATE "C", id LIMIT $5)
    UNION ALL
    (SELECT id, label, term_id, 1, lower(label) COLLATE "C"
       FROM terms
      WHERE category = $1 AND lower(label) COLLATE "C" LIKE lower($2) || '%'
        AND lower(label) COLLATE "C" <> lower($3)
      ORDER BY lower(label) COLLATE "C", id LIMIT $5)
    UNION ALL
    (SELECT id, label, term_id, 2, lower(label) COLLATE "C"
       FROM terms
      WHERE category = $1 AND lower(label) LIKE '%' || lower($2) || '%'
        AND lower(label) COLLATE "C" NOT LIKE lower($2) || '%'
      ORDER BY lower(label) COLLATE "C", id LIMIT $5)
  ) ranked
  ORDER BY rank, sort_label, id
  LIMIT ${TERM_PAGE_SIZE + 1} OFFSET $4`;

/** Makes the user's text match literally inside LIKE (the default escape character is `\`). */
export function escapeLikePattern(text: string): string {
  return text.replace(/[\\%_]/g, (char) => `\\${char}`);
}

@Injectable()
export class TermSearchService {
  constructor(private readonly dataSource: DataSource) {}

  async search(category: TermCategory, search: string, page: number): Promise<TermSearchPage> {
    const offset = (page - 1) * TERM_PAGE_SIZE;
    const rows: TermSearchResult[] = await this.dataSource.query(SEARCH_SQL, [
      category,
      escapeLikePattern(search),
      search,
      offset,
      offset + TERM_PAGE_SIZE + 1,
    ]);
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
