/** One vocabulary entry as read from a file, with the line it came from (for error messages). */
export interface ParsedTerm {
  termId: string;
  label: string;
  line: number;
}

/** Lengths the database and the search UI can live with; longer values are a format error. */
export const MAX_TERM_ID_LENGTH = 200;
export const MAX_LABEL_LENGTH = 1000;
