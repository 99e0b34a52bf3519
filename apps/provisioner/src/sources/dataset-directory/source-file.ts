import {
  closeSync,
  constants,
  Dirent,
  fstatSync,
  lstatSync,
  openSync,
  readSync,
  Stats,
} from 'node:fs';
import { FileHandle, lstat, open } from 'node:fs/promises';

/**
 * Reading files a depositor wrote (metadata and manifests of a drop zone or landing zone):
 * never through a link, never a FIFO, socket or device, never more than a cap. The file is
 * lstat'ed first, so a non-regular file is not even opened; then opened with O_NOFOLLOW (a
 * link swapped in since fails with ELOOP) and O_NONBLOCK (a FIFO swapped in since cannot
 * block the open), and the descriptor is fstat'ed: it must be the regular file lstat saw.
 */

/** Why a source file or directory is refused: the `code` of the problem reported for it. */
export type RefusalCode =
  | 'symlink'
  | 'fifo'
  | 'socket'
  | 'device'
  | 'special_file'
  | 'directory'
  | 'not_a_directory'
  | 'hard_link'
  | 'too_large'
  | 'replaced';

/** One problem with a file of a source, as reported in listings and import errors. */
export interface SourceProblem {
  code: string;
  /** The file, relative to the dataset or submission directory ('' for the directory itself). */
  path: string;
  message: string;
}

export type EntryKind =
  'file' | 'directory' | 'symlink' | 'fifo' | 'socket' | 'device' | 'special_file';

/** What a directory entry or lstat result is; Dirent and Stats answer the same questions. */
export function kindOf(entry: Stats | Dirent<string | Buffer>): EntryKind {
  if (entry.isFile()) return 'file';
  if (entry.isDirectory()) return 'directory';
  if (entry.isSymbolicLink()) return 'symlink';
  if (entry.isFIFO()) return 'fifo';
  if (entry.isSocket()) return 'socket';
  if (entry.isBlockDevice() || entry.isCharacterDevice()) return 'device';
  return 'special_file';
}

/**
 * Whether an entry read from a directory, at `path`, is a directory (never a link to one): an
 * unknown kind (a file system without d_type) is asked to lstat, so a link cannot pass.
 */
export function isDirectoryEntry(entry: Dirent<string>, path: string): boolean {
  const kind = kindOf(entry);
  if (kind !== 'special_file') return kind === 'directory';
  return lstatIfPresent(path)?.isDirectory() === true;
}

const DESCRIPTION: Record<EntryKind, string> = {
  file: 'a regular file',
  directory: 'a directory',
  symlink: 'a symbolic link',
  fifo: 'a FIFO (named pipe)',
  socket: 'a socket',
  device: 'a device file',
  special_file: 'a special file',
};

export function describeKind(kind: EntryKind): string {
  return DESCRIPTION[kind];
}

/** What a file must be: at most `maxBytes` (named by `setting` in messages), one link or any. */
export interface FileRules {
  maxBytes: number;
  /** The setting that raises the cap, named in the refusal so an operator knows what to change. */
  setting: string;
  /** Metadata must be the deliverer's own file: a hard link (link count > 1) is refused. */
  singleLink: boolean;
}

export function refusal(code: RefusalCode, path: string, message: string): SourceProblem {
  return { code, path, message: `${path || 'the directory'} ${message}` };
}

export function isProblem<T>(value: T | SourceProblem): value is SourceProblem {
  return typeof value === 'object' && value !== null && 'code' in value && 'message' in value;
}

/** The verdict on a file from its metadata alone; null when it may be opened. */
export function checkRegularFile(
  stats: Stats,
  path: string,
  rules: FileRules,
): SourceProblem | null {
  const kind = kindOf(stats);
  if (kind !== 'file') {
    const code: RefusalCode = kind === 'directory' ? 'directory' : kind;
    return refusal(code, path, `is ${describeKind(kind)}, not a regular file`);
  }
  if (rules.singleLink && stats.nlink > 1)
    return refusal(
      'hard_link',
      path,
      `has ${stats.nlink} hard links: metadata must be a file of its own, not a link`,
    );
  if (stats.size > rules.maxBytes) return tooLarge(path, stats.size, rules);
  return null;
}

export function tooLarge(path: string, size: number | string, rules: FileRules): SourceProblem {
  return refusal(
    'too_large',
    path,
    `is ${size} bytes, over the limit of ${rules.maxBytes} (${rules.setting})`,
  );
}

/** O_NOCTTY: a terminal device swapped in must not become the process's controlling tty. */
export const OPEN_SOURCE_FLAGS =
  constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;

export function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/**
 * lstat of a path a depositor chose, or null where nothing can be there: absent, under a file
 * (ENOTDIR), through a loop of links (ELOOP) or too long for the system (ENAMETOOLONG).
 */
export function lstatIfPresent(path: string): Stats | null {
  try {
    // Without an exception for the common absent case: listings look up many such paths.
    return lstatSync(path, { throwIfNoEntry: false }) ?? null;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (isMissing(error) || code === 'ELOOP' || code === 'ENAMETOOLONG') return null;
    throw error;
  }
}

/** How to open an entry of a source: what it must be before and after, with which flags. */
export interface OpenRules {
  flags: number;
  /** The verdict on an lstat or fstat result; null when fine. */
  verdict(stats: Stats, path: string): SourceProblem | null;
}

/**
 * An open() that failed because the entry changed kind after lstat (a link, a socket or a
 * non-directory swapped in), or null for any other failure.
 */
function openRace(error: unknown, path: string): SourceProblem | null {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ELOOP' || code === 'ENXIO' || code === 'EISDIR' || code === 'ENOTDIR')
    return refusal('replaced', path, 'was replaced while being opened');
  return null;
}

/** The descriptor must be the entry lstat saw (same device and inode), and still pass. */
function checkOpened(before: Stats, opened: Stats, path: string, rules: OpenRules) {
  if (before.dev !== opened.dev || before.ino !== opened.ino)
    return refusal('replaced', path, 'was replaced while being opened');
  return rules.verdict(opened, path);
}

/** lstat, the verdict, open, fstat, the verdict again: the entry or why not; null when absent. */
export function openCheckedSync(
  absolute: string,
  path: string,
  rules: OpenRules,
): { fd: number; stats: Stats } | SourceProblem | null {
  let before: Stats;
  try {
    before = lstatSync(absolute);
  } catch (error) {
    if (isMissing(error)) return null;
    throw error;
  }
  const verdict = rules.verdict(before, path);
  if (verdict) return verdict;
  let fd: number;
  try {
    fd = openSync(absolute, rules.flags);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    const raced = openRace(error, path);
    if (raced) return raced;
    throw error;
  }
  const stats = fstatSync(fd);
  const problem = checkOpened(before, stats, path, rules);
  if (problem) {
    closeSync(fd);
    return problem;
  }
  return { fd, stats };
}

/** openCheckedSync through libuv's thread pool. */
export async function openChecked(
  absolute: string,
  path: string,
  rules: OpenRules,
): Promise<{ handle: FileHandle; stats: Stats } | SourceProblem | null> {
  let before: Stats;
  try {
    before = await lstat(absolute);
  } catch (error) {
    if (isMissing(error)) return null;
    throw error;
  }
  const verdict = rules.verdict(before, path);
  if (verdict) return verdict;
  let handle: FileHandle;
  try {
    handle = await open(absolute, rules.flags);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    const raced = openRace(error, path);
    if (raced) return raced;
    throw error;
  }
  const stats = await handle.stat();
  const problem = checkOpened(before, stats, path, rules);
  if (problem) {
    await handle.close();
    return problem;
  }
  return { handle, stats };
}

function fileRules(rules: FileRules): OpenRules {
  return {
    flags: OPEN_SOURCE_FLAGS,
    verdict: (stats, path) => checkRegularFile(stats, path, rules),
  };
}

/** Opens a source file for reading, or says why not; null when it does not exist. */
export function openSourceFileSync(absolute: string, path: string, rules: FileRules) {
  return openCheckedSync(absolute, path, fileRules(rules));
}

/** openSourceFileSync through libuv's thread pool. */
export function openSourceFile(absolute: string, path: string, rules: FileRules) {
  return openChecked(absolute, path, fileRules(rules));
}

/**
 * A whole source file, read in blocking calls: for the source-scan thread, never the event
 * loop. Reads at most `maxBytes + 1` bytes whatever the file does meanwhile (it may grow).
 */
export function readSourceFileSync(
  absolute: string,
  path: string,
  rules: FileRules,
): Buffer | SourceProblem | null {
  const opened = openSourceFileSync(absolute, path, rules);
  if (opened === null || isProblem(opened)) return opened;
  try {
    let buffer = Buffer.allocUnsafe(Math.min(opened.stats.size, rules.maxBytes) + 1);
    let length = 0;
    for (;;) {
      if (length === buffer.length) {
        if (length > rules.maxBytes) return tooLarge(path, `more than ${rules.maxBytes}`, rules);
        const grown = Buffer.allocUnsafe(Math.min(buffer.length * 2, rules.maxBytes + 1));
        buffer.copy(grown, 0, 0, length);
        buffer = grown;
      }
      const n = readSync(opened.fd, buffer, length, buffer.length - length, null);
      if (n === 0) return buffer.subarray(0, length);
      length += n;
    }
  } finally {
    closeSync(opened.fd);
  }
}

/** Chunk size for streaming a manifest: ~2,000 lines, a few milliseconds of parsing each. */
const CHUNK_BYTES = 256 * 1024;

/**
 * Streams a source file to `onChunk` (the chunk's buffer is reused: copy what you keep) in
 * blocking calls, stopping with a `too_large` refusal as soon as more than `maxBytes` were
 * read. Null when the file does not exist.
 */
export function readSourceChunksSync(
  absolute: string,
  path: string,
  rules: FileRules,
  onChunk: (chunk: Buffer) => void,
): SourceProblem | null | 'read' {
  const opened = openSourceFileSync(absolute, path, rules);
  if (opened === null || isProblem(opened)) return opened;
  const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
  let total = 0;
  try {
    for (;;) {
      const n = readSync(opened.fd, buffer, 0, buffer.length, null);
      if (n === 0) return 'read';
      total += n;
      if (total > rules.maxBytes) return tooLarge(path, `more than ${rules.maxBytes}`, rules);
      onChunk(buffer.subarray(0, n));
    }
  } finally {
    closeSync(opened.fd);
  }
}

/**
 * readSourceChunksSync through libuv's thread pool: the event loop runs between chunks, so a
 * manifest of a million lines parses in slices of a few milliseconds.
 */
export async function readSourceChunks(
  absolute: string,
  path: string,
  rules: FileRules,
  onChunk: (chunk: Buffer) => void,
): Promise<SourceProblem | null | 'read'> {
  const opened = await openSourceFile(absolute, path, rules);
  if (opened === null || isProblem(opened)) return opened;
  const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
  let total = 0;
  try {
    for (;;) {
      const { bytesRead } = await opened.handle.read(buffer, 0, buffer.length, null);
      if (bytesRead === 0) return 'read';
      total += bytesRead;
      if (total > rules.maxBytes) return tooLarge(path, `more than ${rules.maxBytes}`, rules);
      onChunk(buffer.subarray(0, bytesRead));
    }
  } finally {
    await opened.handle.close();
  }
}
