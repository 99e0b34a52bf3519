import { isUtf8 } from 'node:buffer';
import { checkRelativePath, PathProblem } from './payload-path';

export type ChecksumAlgorithm = 'sha256' | 'md5';

export const MANIFEST_FILES: Record<ChecksumAlgorithm, string> = {
  sha256: 'manifest-sha256.txt',
  md5: 'manifest-md5.txt',
};

const HEX_LENGTH: Record<ChecksumAlgorithm, number> = { sha256: 64, md5: 32 };

/**
 * Longest line kept: the digest, two characters and a path of the longest allowed size
 * (4096 bytes), with room for md5sum's escapes. A longer line is a problem and is skipped
 * without being held in memory.
 */
const MAX_LINE_BYTES = 9000;

/** Problems and unsafe paths kept per manifest; the rest are counted, not stored. */
export const MAX_KEPT_PROBLEMS = 1000;

/** relative path -> lowercase hex digest, in manifest order. */
export type ManifestEntries = Map<string, string>;

export interface ManifestProblem {
  line: number;
  message: string;
}

export interface ParsedManifest {
  algorithm: ChecksumAlgorithm;
  entries: ManifestEntries;
  /** Lines that are not `<hex>  <path>`, or repeat a path (at most MAX_KEPT_PROBLEMS). */
  problems: ManifestProblem[];
  /** Paths that are syntactically fine lines but unsafe as payload paths (at most MAX_KEPT_PROBLEMS). */
  unsafePaths: PathProblem[];
  /** Problems and unsafe paths found beyond the ones kept. */
  unlisted: number;
  /** Unsafe paths found, kept or not (they count as files of the dataset). */
  unsafeCount: number;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });
const NEWLINE = 0x0a;
const BOM = 0xfeff;

/**
 * Parses `<hex>  <relative path>` lines (sha256sum/md5sum output, BagIt manifests) fed in
 * chunks of bytes, so a manifest is never held whole: memory is one line plus what `add`
 * keeps. Accepts the `*` binary marker and md5sum's backslash-escaped lines; blank lines are
 * ignored. A line that is not valid UTF-8 is a problem (never silently replaced by U+FFFD).
 * `add` returns false for a path it has seen already.
 */
export class ManifestParser {
  readonly problems: ManifestProblem[] = [];
  readonly unsafePaths: PathProblem[] = [];
  problemCount = 0;
  unsafeCount = 0;
  private lineNumber = 0;
  private carry: Buffer | null = null;
  private skipping = false;
  private readonly lineRe: RegExp;

  constructor(
    readonly algorithm: ChecksumAlgorithm,
    private readonly add: (path: string, hex: string) => boolean,
  ) {
    // `[^]`, not `.`: a path may hold U+2028 and U+2029 (legal in Linux names), which `.` does
    // not match; lines end at \n only. Whatever the path holds, checkRelativePath judges it.
    this.lineRe = new RegExp(`^(\\\\?)([0-9a-fA-F]{${HEX_LENGTH[algorithm]}}) [ *]([^]+)$`);
  }

  push(chunk: Buffer): void {
    // In a chunk that is valid UTF-8 as a whole (most are: one check per chunk), each line is
    // too (a newline byte is never inside a character): it is sliced as text directly, without
    // a decoder call and a Buffer view per line.
    const valid = isUtf8(chunk);
    let start = 0;
    for (;;) {
      const end = chunk.indexOf(NEWLINE, start);
      if (end < 0) break;
      if (valid && this.carry === null && !this.skipping && end - start <= MAX_LINE_BYTES) {
        this.lineNumber += 1;
        const line = chunk.toString('utf8', start, end);
        // As the decoder does for each line it decodes: a leading byte order mark is dropped.
        const bom = line.charCodeAt(0) === BOM;
        this.completeText(bom ? line.slice(1) : line, chunk, bom ? start + 3 : start, end);
      } else this.completeLine(chunk.subarray(start, end));
      start = end + 1;
    }
    this.keepPartial(chunk.subarray(start));
  }

  end(): void {
    if (this.carry || this.skipping) this.completeLine(Buffer.alloc(0));
    this.carry = null;
  }

  private keepPartial(rest: Buffer): void {
    if (rest.length === 0 || this.skipping) return;
    const length = (this.carry?.length ?? 0) + rest.length;
    if (length > MAX_LINE_BYTES) {
      this.carry = null;
      this.skipping = true;
      return;
    }
    // Copied: the chunk's buffer is reused by the reader for the next read.
    this.carry = this.carry ? Buffer.concat([this.carry, rest]) : Buffer.from(rest);
  }

  private completeLine(tail: Buffer): void {
    this.lineNumber += 1;
    if (this.skipping) {
      this.skipping = false;
      this.problem(`line longer than ${MAX_LINE_BYTES} bytes`);
      return;
    }
    let bytes = tail;
    if (this.carry) {
      bytes = Buffer.concat([this.carry, tail]);
      this.carry = null;
    }
    if (bytes.length > MAX_LINE_BYTES) {
      this.problem(`line longer than ${MAX_LINE_BYTES} bytes`);
      return;
    }
    let line: string;
    try {
      line = utf8.decode(bytes);
    } catch {
      this.problem('not valid UTF-8');
      return;
    }
    // The decoder dropped a leading byte order mark (three bytes).
    const bom = bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;
    this.completeText(line, bytes, bom ? 3 : 0, bytes.length);
  }

  /**
   * A line as text, without its newline; counted already. `bytes[from, to)` holds the same
   * line: the digest and path are read from there again, as strings of their own. Captures of
   * the line's text would be slices of it, each keeping the whole line alive for as long as
   * the entry lives (an import holds every entry of its manifests).
   */
  private completeText(text: string, bytes: Buffer, from: number, to: number): void {
    const cr = text.endsWith('\r');
    const line = cr ? text.slice(0, -1) : text;
    if (line.trim() === '') return;
    const match = this.lineRe.exec(line);
    if (!match) {
      this.problem(`not "<${this.algorithm} hex>  <path>"`);
      return;
    }
    // Everything before the path is ASCII: one byte per character.
    const hexFrom = from + match[1].length;
    const hexTo = hexFrom + match[2].length;
    const hex = bytes.toString('latin1', hexFrom, hexTo).toLowerCase();
    const raw = bytes.toString('utf8', hexTo + 2, cr ? to - 1 : to);
    const path = match[1] ? unescapeMd5sum(raw) : raw;
    const unsafe = checkRelativePath(path);
    if (unsafe) {
      this.unsafeCount += 1;
      if (this.unsafePaths.length < MAX_KEPT_PROBLEMS)
        this.unsafePaths.push({ code: unsafe, path });
      return;
    }
    if (!this.add(path, hex)) this.problem(`path listed twice: ${path}`);
  }

  /** Problems and unsafe paths found beyond the ones kept. */
  get unlisted(): number {
    return this.problemCount - this.problems.length + this.unsafeCount - this.unsafePaths.length;
  }

  private problem(message: string): void {
    this.problemCount += 1;
    if (this.problems.length < MAX_KEPT_PROBLEMS)
      this.problems.push({ line: this.lineNumber, message });
  }
}

/**
 * A parser that keeps every entry (path -> digest), for whoever needs the whole manifest (an
 * import's preflight); `result()` once fed.
 */
export function collectingParser(algorithm: ChecksumAlgorithm): {
  parser: ManifestParser;
  result(): ParsedManifest;
} {
  const entries: ManifestEntries = new Map();
  const parser = new ManifestParser(algorithm, (path, hex) => {
    if (entries.has(path)) return false;
    entries.set(path, hex);
    return true;
  });
  return {
    parser,
    result: () => ({
      algorithm,
      entries,
      problems: parser.problems,
      unsafePaths: parser.unsafePaths,
      unlisted: parser.unlisted,
      unsafeCount: parser.unsafeCount,
    }),
  };
}

/** A whole manifest in memory (tests, small texts): the parser over one chunk. */
export function parseManifest(algorithm: ChecksumAlgorithm, text: string): ParsedManifest {
  const { parser, result } = collectingParser(algorithm);
  parser.push(Buffer.from(text));
  parser.end();
  return result();
}

function unescapeMd5sum(path: string): string {
  return path.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c === 'r' ? '\r' : c));
}
