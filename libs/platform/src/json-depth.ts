import { BadRequestError } from '@app/errors';

/** Deepest nesting of arrays and objects a JSON body may have (`MAX_JSON_DEPTH`'s default). */
export const DEFAULT_MAX_JSON_DEPTH = 64;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;

/**
 * How deep `{`/`[` nest in JSON text, counted in one pass over its UTF-8 bytes without
 * parsing it, stopping as soon as `limit` is passed. Brackets inside strings do not
 * count; malformed text is left to the parser (only its nesting is measured here). Every byte
 * of a multi-byte UTF-8 sequence is above 0x7f, so it can never be taken for a bracket.
 */
export function jsonDepthExceeds(text: Uint8Array | string, limit: number): boolean {
  const bytes = typeof text === 'string' ? Buffer.from(text) : text;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i];
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) {
      inString = true;
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > limit) return true;
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      depth--;
    }
  }
  return false;
}

/**
 * The 400 for JSON nested past `limit`. Parsing such a body is cheap, but everything that walks
 * the value afterwards (the validation pipe, class-transformer, our own checks) recurses once
 * per level, and 10,000 levels overflow the stack: refused before any of them runs.
 */
export function jsonTooDeepError(limit: number, what = 'JSON body'): BadRequestError {
  return new BadRequestError(`${what} is nested deeper than ${limit} levels`, {
    max_depth: limit,
  });
}

/** Throws `jsonTooDeepError` when `text` nests past `limit`. */
export function assertJsonDepth(text: Uint8Array | string, limit: number, what?: string): void {
  if (jsonDepthExceeds(text, limit)) throw jsonTooDeepError(limit, what);
}
