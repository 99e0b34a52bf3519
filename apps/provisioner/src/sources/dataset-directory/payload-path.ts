/**
 * Rules for the relative path of a payload file, applied both to manifest lines and to the
 * names found on disk. A violation is a reason to reject the dataset, never to rename.
 */
export const RESERVED_NAME = '.provisioner';
const MAX_SEGMENT_BYTES = 255;
/**
 * Longest relative path, in bytes: the provisioner reaches a payload file as
 * `/proc/self/fd/<fd>/<path>`, which must stay within Linux's PATH_MAX (4,096 with its NUL),
 * or every open would fail ENAMETOOLONG. The same bound for manifest lines and the walk.
 */
export const MAX_PATH_BYTES = 4000;
// C0 controls, DEL and C1 controls: invisible, break logs and line-based manifests.
// eslint-disable-next-line no-control-regex
const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f]/;

export type PathProblemCode =
  | 'invalid_utf8'
  | 'control_character'
  | 'absolute_path'
  | 'dot_segment'
  | 'empty_segment'
  | 'reserved_name'
  | 'name_too_long';

export interface PathProblem {
  code: PathProblemCode;
  path: string;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Decodes a raw directory entry name; null when it is not valid UTF-8. */
export function decodeName(raw: Buffer): string | null {
  try {
    return utf8.decode(raw);
  } catch {
    return null;
  }
}

/**
 * Whether a string is over `max` bytes in UTF-8; counted only when it could be (a UTF-16 unit
 * is at most 3 bytes): a manifest's every path is checked, and counting was most of the cost.
 */
function longerThan(text: string, max: number): boolean {
  return text.length * 3 > max && Buffer.byteLength(text) > max;
}

/** The checks of a segment known to hold no control character. */
function checkCleanSegment(name: string): PathProblemCode | null {
  if (name === RESERVED_NAME) return 'reserved_name';
  if (longerThan(name, MAX_SEGMENT_BYTES)) return 'name_too_long';
  return null;
}

/** Checks one name as found in a directory listing. */
export function checkSegment(name: string): PathProblemCode | null {
  if (CONTROL_CHARS.test(name)) return 'control_character';
  return checkCleanSegment(name);
}

/** Whether a relative path found by a walk is over MAX_PATH_BYTES. */
export function isPathTooLong(path: string): boolean {
  return longerThan(path, MAX_PATH_BYTES);
}

/** Checks a relative POSIX path as written in a manifest. */
export function checkRelativePath(path: string): PathProblemCode | null {
  if (CONTROL_CHARS.test(path)) return 'control_character';
  if (path.startsWith('/')) return 'absolute_path';
  if (longerThan(path, MAX_PATH_BYTES)) return 'name_too_long';
  for (const segment of path.split('/')) {
    if (segment === '') return 'empty_segment';
    if (segment === '.' || segment === '..') return 'dot_segment';
    const problem = checkCleanSegment(segment);
    if (problem) return problem;
  }
  return null;
}

/** Renders a name for error reports: control bytes and (in raw names) non-ASCII bytes as \xNN. */
export function printableName(raw: Buffer | string): string {
  const hex = (code: number) => `\\x${code.toString(16).padStart(2, '0')}`;
  if (typeof raw !== 'string')
    return [...raw].map((b) => (b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : hex(b))).join('');
  // eslint-disable-next-line no-control-regex
  return raw.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => hex(c.charCodeAt(0)));
}
