import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
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
 * a common substring ("e") walks IDX_terms_category_label_lower in label order and stops after
 * one page, a rare one ("parkinson") is found through the trigram index and only its few rows
 * are sorted. A single query ordered by a CASE expression would rank every matching row first
 * (120 ms for "e" over 100,000 terms against under 1 ms this way; docs/decisions.md, term search).
 * One row more than a page is fetched to know whether another page exists (no count query).
 * `label_lower` is the stored `lower(label)` in "C" order (migration TermSearchLowerLabel).
 *
 * For short searches (see `needsShortGramIndex`) the "anywhere" rank is written differently:
 * `term_short_grams(…) @> …` is implied by the match, so it changes no result, but it lets
 * Postgres find the rows through IDX_terms_short_grams instead of scanning the category
 * (`left(…, 2)` keeps it a necessary condition even if lower-casing lengthens the text). The
 * match itself is then `strpos`, which no index serves: with LIKE, Postgres also used the
 * trigram index and ANDed the two bitmaps, and the trigram match must be rechecked row by row,
 * recomputing the substring function for each (" k": 67 ms instead of 9 ms).
 */
const ANYWHERE_MATCH = `label_lower LIKE '%' || lower($2) || '%'`;

/**
 * Searches longer than this look rows up by their first this-many characters only. The trigram
 * index reads one posting list per trigram of the pattern, so a whole label (40–60 characters)
 * cost 13–26 ms where its first 16 characters, already selective, cost 5–9 ms; `strpos` then
 * checks the whole text on those few rows. (Windows of 8 or 12 characters sometimes led the
 * planner to walk the label index instead: 86 ms.) The window is cut from the lower-cased
 * search in SQL, so it is always a piece of what the row must contain, then escaped for LIKE.
 */
export const LONG_SEARCH_WINDOW = 16;
const WINDOW_PATTERN =
  `replace(replace(replace(left(lower($3), ${LONG_SEARCH_WINDOW}), '\\', '\\\\'), ` +
  `'%', '\\%'), '_', '\\_')`;
const LONG_ANYWHERE_MATCH =
  `strpos(label_lower, lower($3)) > 0 ` + `AND label_lower LIKE '%' || ${WINDOW_PATTERN} || '%'`;
const SHORT_ANYWHERE_MATCH =
  `strpos(label_lower, lower($3)) > 0 ` +
  `AND term_short_grams(label_lower) @> ARRAY[left(lower($3), 2)]`;

function searchSql(anywhereMatch: string): string {
  return `
  SELECT id, text, term_id FROM (
    (SELECT id, label AS text, term_id, 0 AS rank, label_lower
       FROM terms
      WHERE category = $1 AND label_lower = lower($3)
      ORDER BY label_lower, id LIMIT $5)
    UNION ALL
    (SELECT id, label, term_id, 1, label_lower
       FROM terms
      WHERE category = $1 AND label_lower LIKE lower($2) || '%'
        AND label_lower <> lower($3)
      ORDER BY label_lower, id LIMIT $5)
    UNION ALL
    (SELECT id, label, term_id, 2, label_lower
       FROM terms
      WHERE category = $1 AND ${anywhereMatch}
        AND label_lower NOT LIKE lower($2) || '%'
      ORDER BY label_lower, id LIMIT $5)
  ) ranked
  ORDER BY rank, label_lower, id
  LIMIT ${TERM_PAGE_SIZE + 1} OFFSET $4`;
}

const SEARCH_SQL = searchSql(ANYWHERE_MATCH);
const SHORT_SEARCH_SQL = searchSql(SHORT_ANYWHERE_MATCH);
const LONG_SEARCH_SQL = searchSql(LONG_ANYWHERE_MATCH);

/**
 * Whether a search is too short for trigrams (under 3 characters) and possibly rare, so that
 * the 1–2-character substring index should find its rows. A single Latin letter is left to the
 * label-order walk: every letter occurs in a few percent of labels at least, so a page fills
 * after a few thousand rows, and evaluating the substring function on each matching row would
 * make deep pages of "a" slower (docs/decisions.md, term search).
 */
export function needsShortGramIndex(search: string): boolean {
  const length = [...search].length;
  return length === 2 || (length === 1 && !/^[a-z]$/i.test(search));
}

/** Makes the user's text match literally inside LIKE (the default escape character is `\`). */
export function escapeLikePattern(text: string): string {
  return text.replace(/[\\%_]/g, (char) => `\\${char}`);
}

@Injectable()
export class TermSearchService {
  async search(
    manager: EntityManager,
    category: TermCategory,
    search: string,
    page: number,
  ): Promise<TermSearchPage> {
    const offset = (page - 1) * TERM_PAGE_SIZE;
    const sql = needsShortGramIndex(search)
      ? SHORT_SEARCH_SQL
      : [...search].length > LONG_SEARCH_WINDOW
        ? LONG_SEARCH_SQL
        : SEARCH_SQL;
    const rows: TermSearchResult[] = await manager.query(sql, [
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
