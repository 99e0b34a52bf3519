import { BadRequestError } from '@app/errors';

/** Deepest nesting of arrays and objects a JSON body may have (`MAX_JSON_DEPTH`'s default). */
export const DEFAULT_MAX_JSON_DEPTH = 64;
/** Most arrays and objects one JSON body may hold (`MAX_JSON_OBJECTS`'s default). */
export const DEFAULT_MAX_JSON_OBJECTS = 1_000_000;

/** How deep and how many arrays and objects a JSON text may have. */
export interface JsonLimits {
  maxDepth: number;
  maxObjects: number;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;

/**
 * Which limit JSON text passes, if any: its `{`/`[` counted and their nesting measured in one
 * pass over its UTF-8 bytes, without parsing it, stopping at the first limit passed. Brackets
 * inside strings do not count; malformed text is left to the parser. Every byte of a multi-byte
 * UTF-8 sequence is above 0x7f, so none can be taken for a bracket or a quote.
 */
export function jsonLimitPassed(
  text: Uint8Array | string,
  limits: JsonLimits,
): 'depth' | 'objects' | undefined {
  const bytes = typeof text === 'string' ? Buffer.from(text) : text;
  let depth = 0;
  let objects = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i];
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) {
      inString = true;
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > limits.maxDepth) return 'depth';
      if (++objects > limits.maxObjects) return 'objects';
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      depth--;
    }
  }
  return undefined;
}

/**
 * Refuses JSON text past either limit with a 400, before it is parsed. Depth: parsing is cheap,
 * but everything that walks the value afterwards (the validation pipe, class-transformer, our
 * own checks) recurses once per level, and 10,000 levels overflow the stack. Count: each array
 * or object costs the parser 40-80 bytes and about a microsecond however small its text
 * (`{},` is 3 bytes), so a 32 MiB body of empty records would take over 800 MB and seconds of
 * one thread; bounding the count bounds both, whatever the body limit.
 */
export function assertJsonLimits(
  text: Uint8Array | string,
  limits: JsonLimits,
  what = 'JSON body',
): void {
  const passed = jsonLimitPassed(text, limits);
  if (passed === 'depth') {
    throw new BadRequestError(`${what} is nested deeper than ${limits.maxDepth} levels`, {
      max_depth: limits.maxDepth,
    });
  }
  if (passed === 'objects') {
    throw new BadRequestError(`${what} holds more than ${limits.maxObjects} arrays and objects`, {
      max_objects: limits.maxObjects,
    });
  }
}
