/** One vocabulary entry as read from a file, with the line it came from (for error messages). */
export interface ParsedTerm {
  termId: string;
  label: string;
  line: number;
}

/** Lengths the database and the search UI can live with; longer values are a format error. */
export const MAX_TERM_ID_LENGTH = 200;
export const MAX_LABEL_LENGTH = 1000;
/**
 * A label is a key of the term-search btree index, whose entries hold at most about 2,700 bytes:
 * 1,000 characters of CJK are 3,000 bytes of UTF-8. Its lower-case form (what the index holds)
 * is bounded too, with room to spare for case mappings that grow a character.
 */
export const MAX_LABEL_BYTES = 2000;
