import { FileRules, isProblem, readSourceFileSync, SourceProblem } from './source-file';

export type JsonObject = Record<string, unknown>;

/**
 * A metadata document of a source (submission.json, dataset.json): its object, or why there
 * is none. Both null: the file does not exist.
 */
export interface JsonDocument {
  value: JsonObject | null;
  problem: SourceProblem | null;
}

export const ABSENT_DOCUMENT: JsonDocument = { value: null, problem: null };

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Deepest nesting of objects and arrays a metadata document may have. What reads a document
 * afterwards (structured clone to and from threads, JSON.stringify into provenance, the job's
 * data) recurses once per level: past a few thousand the stack overflows. No real metadata
 * comes near 64; the listing and the import refuse deeper documents alike.
 */
export const MAX_JSON_DEPTH = 64;

/** The deepest nesting of a JSON text, counted without recursion (strings skipped). */
export function jsonDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i += 1; // backslash: the next character is escaped
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) deepest = Math.max(deepest, ++depth);
    else if (c === 0x7d || c === 0x5d) depth -= 1;
  }
  return deepest;
}

/**
 * Parses a document's bytes: a JSON object in UTF-8, nested at most MAX_JSON_DEPTH deep, or an
 * `invalid_json` problem. The one parser of submission.json and dataset.json, for listings
 * and imports alike.
 */
export function parseJsonDocument(bytes: Buffer, path: string): JsonDocument {
  const invalid = (message: string): JsonDocument => ({
    value: null,
    problem: { code: 'invalid_json', path, message: `${path} ${message}` },
  });
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return invalid('is not valid UTF-8');
  }
  if (jsonDepth(text) > MAX_JSON_DEPTH)
    return invalid(`is nested deeper than ${MAX_JSON_DEPTH} levels`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return invalid('is not valid JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    return invalid('is not a JSON object');
  return { value: parsed as JsonObject, problem: null };
}

/** Longest title kept from a document for listings. */
const MAX_TITLE_CHARS = 1000;

/**
 * What listings need of a dataset.json (title, and who it belongs to), so that a cache of
 * thousands of datasets holds a few short strings each, not whole documents.
 */
export function summarizeDatasetDocument(document: JsonDocument): JsonDocument {
  if (!document.value) return document;
  const { title, submission, dataset_id } = document.value;
  const summary: JsonObject = {};
  if (typeof title === 'string') summary.title = title.slice(0, MAX_TITLE_CHARS);
  // Longer than any valid reference: cut, it can only fail to match.
  if (typeof submission === 'string') summary.submission = submission.slice(0, 256);
  if (typeof dataset_id === 'string') summary.dataset_id = dataset_id.slice(0, 256);
  return { ...document, value: summary };
}

/** Reads and parses one document in blocking calls (see readSourceFileSync). */
export function readJsonDocumentSync(
  absolute: string,
  path: string,
  rules: FileRules,
): JsonDocument {
  const bytes = readSourceFileSync(absolute, path, rules);
  if (bytes === null) return ABSENT_DOCUMENT;
  if (isProblem(bytes)) return { value: null, problem: bytes };
  return parseJsonDocument(bytes, path);
}
