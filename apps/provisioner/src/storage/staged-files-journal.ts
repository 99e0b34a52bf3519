import type { StagedFile } from './storage-system';

/** A journal line: a staged file, and on S3 the ETag its object was confirmed with. */
export interface JournalEntry extends StagedFile {
  etag?: string;
}

/** Where a filesystem area keeps its journal (`.provisioner/` is reserved in every payload). */
export const JOURNAL_PATH = '.provisioner/staged-files.jsonl';

const HEX64 = /^[0-9a-f]{64}$/;
const HEX32 = /^[0-9a-f]{32}$/;

const isCount = (value: unknown): value is number =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
const isTime = (value: unknown): value is number =>
  typeof value === 'number' && Number.isFinite(value);

/** A relative path of plain segments: never absolute, empty, `.`, `..` or the reserved name. */
function isPlainPath(path: unknown): path is string {
  if (typeof path !== 'string' || path === '' || path.length > 4096) return false;
  const segments = path.split('/');
  return (
    segments[0] !== '.provisioner' &&
    segments.every((s) => s !== '' && s !== '.' && s !== '..' && !s.includes('\0'))
  );
}

/** One JSON object per line, in the order given. */
export function formatJournal(entries: readonly JournalEntry[]): string {
  return entries
    .map((e) =>
      JSON.stringify({
        path: e.path,
        size: e.size,
        sha256: e.sha256,
        md5: e.md5,
        source: {
          ino: e.source.ino,
          size: e.source.size,
          mtimeMs: e.source.mtimeMs,
          ctimeMs: e.source.ctimeMs,
        },
        ...(e.etag !== undefined ? { etag: e.etag } : {}),
      }),
    )
    .map((line) => `${line}\n`)
    .join('');
}

function entryOf(value: unknown): JournalEntry | null {
  if (typeof value !== 'object' || value === null) return null;
  const v = value as Record<string, unknown>;
  const source = v.source as Record<string, unknown> | undefined;
  if (
    !isPlainPath(v.path) ||
    !isCount(v.size) ||
    typeof v.sha256 !== 'string' ||
    !HEX64.test(v.sha256) ||
    !(v.md5 === null || (typeof v.md5 === 'string' && HEX32.test(v.md5))) ||
    typeof source !== 'object' ||
    source === null ||
    !isCount(source.ino) ||
    !isCount(source.size) ||
    !isTime(source.mtimeMs) ||
    !isTime(source.ctimeMs) ||
    !(v.etag === undefined || (typeof v.etag === 'string' && v.etag.length <= 80))
  )
    return null;
  return {
    path: v.path,
    size: v.size,
    sha256: v.sha256,
    md5: v.md5,
    source: {
      ino: source.ino,
      size: source.size,
      mtimeMs: source.mtimeMs,
      ctimeMs: source.ctimeMs,
    },
    ...(v.etag !== undefined ? { etag: v.etag } : {}),
  };
}

/**
 * The entries of a journal, the last one of each path winning (in the place of the first).
 * A line that is not a complete entry (the tail a killed writer left, anything damaged) is
 * skipped: the file it names is then simply copied again.
 */
export function parseJournal(text: string): JournalEntry[] {
  const byPath = new Map<string, JournalEntry>();
  const lines = new JournalLines((entry) => byPath.set(entry.path, entry));
  lines.push(Buffer.from(text));
  lines.end();
  return [...byPath.values()];
}

const NEWLINE = 0x0a;

/**
 * A journal's entries from its bytes, fed in chunks, each handed to `onEntry` as its line
 * ends (what parseJournal skips is skipped): a journal of a million files is never held whole.
 */
export class JournalLines {
  private carry: Buffer | null = null;

  constructor(private readonly onEntry: (entry: JournalEntry) => void) {}

  push(chunk: Buffer): void {
    let start = 0;
    for (let end = chunk.indexOf(NEWLINE); end >= 0; end = chunk.indexOf(NEWLINE, start)) {
      const part = chunk.subarray(start, end);
      this.line(this.carry ? Buffer.concat([this.carry, part]) : part);
      this.carry = null;
      start = end + 1;
    }
    if (start < chunk.length) {
      const rest = chunk.subarray(start);
      this.carry = this.carry ? Buffer.concat([this.carry, rest]) : Buffer.from(rest);
    }
  }

  end(): void {
    if (this.carry) this.line(this.carry);
    this.carry = null;
  }

  private line(bytes: Buffer): void {
    if (bytes.length === 0) return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(bytes.toString('utf8'));
    } catch {
      return;
    }
    const entry = entryOf(parsed);
    if (entry) this.onEntry(entry);
  }
}

/** A journal entry as the caller sees it: without what only the storage needs. */
export function stagedFileOf({ etag: _etag, ...file }: JournalEntry): StagedFile {
  return file;
}
