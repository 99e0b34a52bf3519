import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import type { ParsedTerm } from './parsers/parsed-term';
import type { TermCategory } from './term-category';

export const TERM_PAGE_SIZE = 25;

export interface TermSearchResult {
  id: number;
  text: string;
  term_id: string;
}

/**
 * Case-insensitive substring match ranked exact > prefix > anywhere, then by label (lower-cased,
 * byte order "C", so the order is the same on every server), then id.
 *
 * Each rank is its own sub-query with its own ORDER BY … LIMIT, so Postgres can stop early.
 * One row more than a page is fetched to know whether another page exists (no count query).
 * A single query ordered by a CASE expression would rank every matching row first (120 ms for
 * "e" over 100,000 terms; docs/decisions/term-search-ranks.md). `label_lower` is the stored
 * `lower(label)` in "C" order (migration TermSearchLowerLabel).
 *
 * The "anywhere" rank is where the time goes, and how to find its rows depends on how common
 * the search is, which the planner cannot know (its estimate for `LIKE '%…%'` comes from a
 * 100-label histogram). Left to choose, it walked the whole label index for searches it thought
 * common and that matched 20 labels (55 ms at 100,000 terms, the tail of the bench). So the
 * choice is made at run time, in one statement:
 * - `walked`: the labels of the category outside the prefix range, in label order (the btree,
 *   index-only), at most `$6` = `WALK_ROWS_PER_RESULT` per row needed, filtered with `strpos`
 *   and cut at the `$5` rows needed. Postgres reads the index only as far as the cut, so a
 *   common search stops after a short walk, however deep its page.
 * - `walk_answers`: the walk is the answer when it found the `$5` rows needed (they are exactly
 *   the first matches: every later label sorts after them) or read the whole category (no
 *   label at position `$6`; that second, shorter walk is asked only on deep pages, see
 *   `WALK_END_CHECKED_ABOVE`).
 * - `found` otherwise: every match, through an index chosen by the search's length (see
 *   `INDEXED_MATCH`), then sorted. A MATERIALIZED CTE, so it is planned without an ORDER BY …
 *   LIMIT to walk for, and computed only if read; by then under 1 label in 100 of the walk
 *   matched, so its candidates are few.
 * The page is cut from ids and labels only (index-only where possible); the label as stored
 * and the term id are fetched for its 26 rows at the end.
 */
const WALK_ROWS_PER_RESULT = 100;
/**
 * Whether the walk read the whole category matters only when `found` could return many rows,
 * i.e. on deep pages: for fewer rows needed, `found` of a category the walk covered returns
 * fewer than that, which costs less than checking (a second walk: 0.3 ms at page 1 on every
 * rare search). On deep pages the check keeps the last pages of a common search from sorting
 * all its matches (`e`, page 3,700 of 100,000 terms: 78 ms instead of over a second).
 */
const WALK_END_CHECKED_ABOVE = 250;

/**
 * Searches longer than this look rows up by their first this-many characters only. The trigram
 * index reads one posting list per trigram of the pattern, so a whole label (40–60 characters)
 * cost 13–26 ms where its first 16 characters, already selective, cost 5–9 ms; `strpos` then
 * checks the whole text on those few rows. The window is cut from the lower-cased search in
 * SQL, so it is always a piece of what the row must contain, then escaped for LIKE.
 */
export const LONG_SEARCH_WINDOW = 16;
const WINDOW_PATTERN =
  `replace(replace(replace(left(lower($3), ${LONG_SEARCH_WINDOW}), '\\', '\\\\'), ` +
  `'%', '\\%'), '_', '\\_')`;

/**
 * How `found` reaches the rows containing the search. Each is `strpos` (the match itself: a
 * literal substring of the lower-cased label) plus a condition it implies that an index serves:
 * - under 3 characters (no complete trigram): `term_short_grams(…) @> …` through
 *   IDX_terms_short_grams (`left(…, 2)` keeps it implied even if lower-casing lengthens the text).
 *   Not `LIKE`: the planner would also AND in the trigram index, whose matches are rechecked row
 *   by row (" k": 67 ms instead of 9 ms);
 * - 3 to LONG_SEARCH_WINDOW characters: `LIKE '%…%'` through the trigram index;
 * - longer: `LIKE` on the first LONG_SEARCH_WINDOW characters (see above).
 */
const MATCH = `strpos(label_lower, lower($3)) > 0`;
const INDEXED_MATCH = {
  short: `${MATCH} AND term_short_grams(label_lower) @> ARRAY[left(lower($3), 2)]`,
  trigram: `${MATCH} AND label_lower LIKE '%' || lower($2) || '%'`,
  window: `${MATCH} AND label_lower LIKE '%' || ${WINDOW_PATTERN} || '%'`,
};
type IndexedMatch = keyof typeof INDEXED_MATCH;
const PREFIX = `label_lower LIKE lower($2) || '%'`;
const NOT_PREFIX = `label_lower NOT LIKE lower($2) || '%'`;
/** The walk's order: the category's labels outside the prefix range, by label then id. */
const OUTSIDE_PREFIX_IN_ORDER = `FROM terms WHERE category = $1 AND ${NOT_PREFIX}
       ORDER BY label_lower, id`;

function searchSql(indexedMatch: IndexedMatch): string {
  return `
  WITH walked AS MATERIALIZED (
    SELECT id, label_lower FROM (
      SELECT id, label_lower ${OUTSIDE_PREFIX_IN_ORDER} LIMIT $6
    ) first_labels
    WHERE ${MATCH}
    LIMIT $5
  ), walk_answers AS MATERIALIZED (
    SELECT (SELECT count(*) FROM walked) >= $5 OR ($5 > ${WALK_END_CHECKED_ABOVE} AND NOT EXISTS (
      SELECT ${OUTSIDE_PREFIX_IN_ORDER} OFFSET $6 - 1 LIMIT 1
    )) AS yes
  ), found AS MATERIALIZED (
    SELECT id, label_lower FROM terms
     WHERE category = $1 AND ${INDEXED_MATCH[indexedMatch]} AND ${NOT_PREFIX}
  ), page AS (
    SELECT id, rank, label_lower FROM (
      (SELECT id, 0 AS rank, label_lower
         FROM terms
        WHERE category = $1 AND label_lower = lower($3)
        ORDER BY label_lower, id LIMIT $5)
      UNION ALL
      (SELECT id, 1, label_lower
         FROM terms
        WHERE category = $1 AND ${PREFIX} AND label_lower <> lower($3)
        ORDER BY label_lower, id LIMIT $5)
      UNION ALL
      (SELECT id, 2, label_lower FROM walked WHERE (SELECT yes FROM walk_answers))
      UNION ALL
      (SELECT id, 2, label_lower
         FROM found
        WHERE NOT (SELECT yes FROM walk_answers)
        ORDER BY label_lower, id LIMIT $5)
    ) ranked
    ORDER BY rank, label_lower, id
    LIMIT ${TERM_PAGE_SIZE + 1} OFFSET $4
  )
  SELECT terms.id, terms.label AS text, terms.term_id
    FROM page JOIN terms ON terms.id = page.id
   ORDER BY page.rank, page.label_lower, page.id`;
}

const SEARCH_SQL: Record<IndexedMatch, string> = {
  short: searchSql('short'),
  trigram: searchSql('trigram'),
  window: searchSql('window'),
};

/** Which index `found` uses for a search (see INDEXED_MATCH). */
export function indexedMatchFor(search: string): IndexedMatch {
  const length = [...search].length;
  if (length < 3) return 'short';
  return length > LONG_SEARCH_WINDOW ? 'window' : 'trigram';
}

/** Makes the user's text match literally inside LIKE (the default escape character is `\`). */
export function escapeLikePattern(text: string): string {
  return text.replace(/[\\%_]/g, (char) => `\\${char}`);
}

/**
 * Upserts one batch with a single statement. `xmax = 0` is how PostgreSQL tells a freshly
 * inserted row from one updated through ON CONFLICT; rows whose label did not change are not
 * touched (the WHERE clause) and so not returned, which keeps reloads cheap and counts honest.
 */
const UPSERT_BATCH_SQL = `
  WITH upserted AS (
    INSERT INTO terms (category, term_id, label)
    SELECT $1::text, incoming.term_id, incoming.label
    FROM unnest($2::text[], $3::text[]) AS incoming(term_id, label)
    ON CONFLICT (category, term_id) DO UPDATE SET label = EXCLUDED.label
    WHERE terms.label IS DISTINCT FROM EXCLUDED.label
    RETURNING (xmax = 0) AS inserted
  )
  SELECT count(*) FILTER (WHERE inserted)::int AS inserted,
         count(*) FILTER (WHERE NOT inserted)::int AS updated
  FROM upserted`;

/** The term vocabularies (`terms`): search, and loading in batches. */
@Injectable()
export class TermsRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * The rows of a page of `search` in the category, ranked (see above), from `offset`; `needed`
   * is `offset` plus a page plus one, the rows any rank may have to give.
   */
  searchPage(
    manager: EntityManager,
    category: TermCategory,
    search: string,
    offset: number,
    needed: number,
  ): Promise<TermSearchResult[]> {
    return manager.query<TermSearchResult[]>(SEARCH_SQL[indexedMatchFor(search)], [
      category,
      escapeLikePattern(search),
      search,
      offset,
      needed,
      needed * WALK_ROWS_PER_RESULT,
    ]);
  }

  /** Upserts the batch into the category; how many terms were inserted and how many updated. */
  async upsertBatch(
    manager: EntityManager,
    category: TermCategory,
    batch: ParsedTerm[],
  ): Promise<{ inserted: number; updated: number }> {
    const rows = await manager.query<{ inserted: number; updated: number }[]>(UPSERT_BATCH_SQL, [
      category,
      batch.map((term) => term.termId),
      batch.map((term) => term.label),
    ]);
    return rows[0];
  }

  /**
   * Marks the new rows all-visible and refreshes the statistics (see `tidyAfterLoad`). Outside
   * any transaction: VACUUM cannot run in one.
   */
  async vacuum(): Promise<void> {
    await this.dataSource.query('VACUUM (ANALYZE) terms');
  }
}
