import { isUtf8 } from 'node:buffer';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { FieldProblem, UnsupportedMediaTypeError, ValidationFailedError } from '@app/errors';

/** At most this many places are named in one answer (and marked while locating them). */
const MAX_REPORTED = 20;

/**
 * Length of the well-formed UTF-8 sequence starting at `i`, or 0 when the byte there does not
 * start one (the Unicode Standard's Table 3-7: no overlong forms, no surrogates, nothing above
 * U+10FFFF, no truncated sequence).
 */
function sequenceLength(bytes: Uint8Array, i: number): number {
  const lead = bytes[i];
  if (lead < 0x80) return 1;
  const continuation = (k: number, low = 0x80, high = 0xbf) =>
    i + k < bytes.length && bytes[i + k] >= low && bytes[i + k] <= high;
  if (lead >= 0xc2 && lead <= 0xdf) return continuation(1) ? 2 : 0;
  if (lead >= 0xe0 && lead <= 0xef) {
    const low = lead === 0xe0 ? 0xa0 : 0x80;
    const high = lead === 0xed ? 0x9f : 0xbf;
    return continuation(1, low, high) && continuation(2) ? 3 : 0;
  }
  if (lead >= 0xf0 && lead <= 0xf4) {
    const low = lead === 0xf0 ? 0x90 : 0x80;
    const high = lead === 0xf4 ? 0x8f : 0xbf;
    return continuation(1, low, high) && continuation(2) && continuation(3) ? 4 : 0;
  }
  return 0;
}

/** Start offsets of the runs of bytes that are not well-formed UTF-8, with their ends. */
export function invalidUtf8Runs(bytes: Uint8Array): { start: number; end: number }[] {
  const runs: { start: number; end: number }[] = [];
  for (let i = 0; i < bytes.length;) {
    const length = sequenceLength(bytes, i);
    if (length > 0) {
      i += length;
      continue;
    }
    const last = runs[runs.length - 1];
    if (last !== undefined && last.end === i) last.end = i + 1;
    else runs.push({ start: i, end: i + 1 });
    i += 1;
  }
  return runs;
}

/** JSON paths (`items[3].name`) of the strings and field names that hold `marker`. */
function pathsHolding(value: unknown, marker: string, path: string, found: FieldProblem[]): void {
  if (found.length >= MAX_REPORTED) return;
  if (typeof value === 'string') {
    if (value.includes(marker))
      found.push({ parameter: path || 'body', message: 'is not valid UTF-8' });
    return;
  }
  if (Array.isArray(value)) {
    value.forEach((item, i) => pathsHolding(item, marker, `${path}[${i}]`, found));
    return;
  }
  if (value === null || typeof value !== 'object') return;
  for (const [key, inner] of Object.entries(value)) {
    const shown = key.split(marker).join('\ufffd');
    const at = path ? `${path}.${shown}` : shown;
    if (key.includes(marker))
      found.push({ parameter: at, message: 'field name is not valid UTF-8' });
    pathsHolding(inner, marker, at, found);
  }
}

/**
 * Where a JSON body's invalid UTF-8 is: each invalid run is replaced by a marker that cannot
 * occur in the text, the result parsed, and the strings holding a marker named by their path.
 * Bytes outside strings make the JSON itself invalid; then the body as a whole is named.
 */
function jsonProblems(bytes: Buffer, runs: { start: number; end: number }[]): FieldProblem[] {
  const marker = `\ue000${randomUUID()}\ue000`;
  const parts: string[] = [];
  let from = 0;
  for (const [n, run] of runs.entries()) {
    parts.push(bytes.toString('utf8', from, run.start), n < MAX_REPORTED ? marker : '\ufffd');
    from = run.end;
  }
  parts.push(bytes.toString('utf8', from));
  try {
    const found: FieldProblem[] = [];
    pathsHolding(JSON.parse(parts.join('')), marker, '', found);
    if (found.length > 0) return found;
  } catch {
    // Reported below as the whole body.
  }
  return [{ parameter: 'body', message: `is not valid UTF-8 (byte ${runs[0].start})` }];
}

function textProblems(
  bytes: Buffer,
  runs: { start: number; end: number }[],
  parameter = 'body',
): FieldProblem[] {
  return runs.slice(0, MAX_REPORTED).map(({ start }) => {
    let line = 1;
    for (let i = bytes.indexOf(10); i !== -1 && i < start; i = bytes.indexOf(10, i + 1)) line++;
    return { parameter, message: `is not valid UTF-8 (line ${line}, byte ${start})` };
  });
}

/**
 * The text of a file a command reads (an import document, a vocabulary): the same rule as for
 * request bodies, a 400-class error naming `name` and the line instead of U+FFFD in the data.
 */
export function decodeUtf8(bytes: Buffer, name: string): string {
  if (isUtf8(bytes)) return bytes.toString('utf8');
  throw new ValidationFailedError(
    textProblems(bytes, invalidUtf8Runs(bytes), name),
    `${name} is not valid UTF-8`,
  );
}

type Verify = (req: IncomingMessage, res: ServerResponse, body: Buffer, encoding: string) => void;

/**
 * body-parser's `verify` hook: sees the raw (inflated) bytes before they are decoded. Decoding
 * would silently turn invalid UTF-8 into U+FFFD, so a mangled name or key would be stored as
 * if the client had sent it. JSON must be UTF-8 (RFC 8259 §8.1); text in another charset its
 * client declared is left to the decoder.
 */
export function rejectInvalidUtf8(kind: 'json' | 'text'): Verify {
  return (_req, _res, body, encoding) => {
    const utf8 = encoding === 'utf-8' || encoding === 'utf8';
    if (kind === 'json' && !utf8) {
      throw new UnsupportedMediaTypeError('application/json in UTF-8 (no other charset)');
    }
    if (!utf8 || isUtf8(body)) return;
    const runs = invalidUtf8Runs(body);
    const problems = kind === 'json' ? jsonProblems(body, runs) : textProblems(body, runs);
    throw new ValidationFailedError(problems, 'Request body is not valid UTF-8');
  };
}
