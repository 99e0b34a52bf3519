import { lstatSync, readdirSync, Stats } from 'node:fs';
import { readdir } from 'node:fs/promises';
import {
  MAX_KEPT_PROBLEMS,
  checkSegment,
  decodeName,
  isPathTooLong,
  MAX_PATH_BYTES,
  printableName,
  identityOf,
  pinDirectorySync,
  isProblem,
  kindOf,
} from '../../sources/source-system';
import { ImportProblem, ImportTransientError } from '../import-errors';
import { ProblemList } from '../problem-list';

export interface WalkedFile {
  /** POSIX path relative to the payload root. */
  path: string;
  size: number;
  mtimeMs: number;
  ctimeMs: number;
  /** Device and inode: the copy opens exactly this file or fails. */
  dev: number;
  ino: number;
  /** The permission bits let this process read it; false: they may not (access(2) decides). */
  readable: boolean;
}

/** Who this process is, for reading permission bits (getuid is absent off POSIX). */
export interface ProcessIds {
  uid: number;
  groups: Set<number>;
}

export function processIds(): ProcessIds | null {
  if (!process.getuid || !process.getgid || !process.getgroups) return null;
  return { uid: process.getuid(), groups: new Set([process.getgid(), ...process.getgroups()]) };
}

/**
 * Whether the owner, group or other read bit that applies to this process is set: what access(2)
 * would answer in the common case, without a system call per file (10,000 files: ~15 ms less).
 * A file the bits refuse is still asked to access(2), which knows of root's override and ACLs
 * granting more. Left to the copy: an ACL denying a named user what the bits grant (its open
 * fails then, and the attempt with it).
 */
function permitsRead(stats: Stats, ids: ProcessIds | null): boolean {
  if (ids === null) return false;
  if (stats.uid === ids.uid) return (stats.mode & 0o400) !== 0;
  if (ids.groups.has(stats.gid)) return (stats.mode & 0o040) !== 0;
  return (stats.mode & 0o004) !== 0;
}

export interface WalkResult {
  files: Map<string, WalkedFile>;
  /** At most 1,000 kept, every one counted: a depositor decides how many there are. */
  problems: ProblemList;
}

/** A directory still to be walked. */
export interface PendingDirectory {
  /** Relative path without a trailing slash ('' for the root). */
  relative: string;
  /** Device and inode lstat found inside its parent; null for the (pinned) root. */
  identity: string | null;
}

/**
 * A directory's files as two columns, which cross from a copy thread as one string and one
 * transferred buffer: cloned as an object each, 200,000 files took the main thread twice as long
 * to receive as the threads took to walk them.
 */
export interface DirectoryFiles {
  /** The files' names in the directory, in order, joined by '/' (which no name holds). */
  names: string;
  /** FILE_FIELDS numbers per file, in the order of WalkedFile: size ... readable (1 or 0). */
  stats: Float64Array;
}

/** size, mtimeMs, ctimeMs, dev, ino, readable. */
const FILE_FIELDS = 6;

/** What one directory holds: its files, the subdirectories to walk next, its problems. */
export interface DirectoryPart {
  /** The directory, relative to the payload root ('' for the root). */
  relative: string;
  files: DirectoryFiles;
  directories: PendingDirectory[];
  /** The first MAX_KEPT_PROBLEMS problems of the directory... */
  problems: ImportProblem[];
  /** ...and how many it has in all. */
  problemCount: number;
}

/**
 * Walks the directories handed to it and returns what each holds (the caller walks the
 * subdirectories next): here on the event loop, or on the copy threads (see walkOnThreads).
 */
export type DirectoryWalker = (
  root: string,
  directories: PendingDirectory[],
) => Promise<DirectoryPart[]>;

export function treeChanged(path: string): ImportTransientError {
  return new ImportTransientError(
    'source_changed',
    `the payload changed while it was walked: ${path}`,
    [{ code: 'source_changed', path, message: 'replaced or removed while being walked' }],
  );
}

/**
 * Walks a payload tree without following anything, reading names as raw bytes so invalid
 * UTF-8 is seen rather than mangled. `root` is a pinned directory (see PinnedDirectory); every
 * subdirectory is opened without following a link and must be the inode lstat found in its
 * parent, so a directory swapped for a link mid-walk is never read. Collects every problem
 * instead of stopping at the first, because the submitter needs the list (the first 1,000 and
 * the count). Iterative, and no list is ever spread into a call, so neither depth nor a
 * directory of 150,000 entries can overflow the stack. An entry whose path is longer than
 * MAX_PATH_BYTES is a problem and is not descended into, so no path the walk opens is longer
 * than the system's PATH_MAX (ENAMETOOLONG). `walker` reads the directories (walkOnEventLoop: one at a
 * time on this thread; walkOnThreads); whatever it is, the result is the same.
 */
export async function walkPayload(root: string, walker: DirectoryWalker): Promise<WalkResult> {
  const files = new Map<string, WalkedFile>();
  const problems = await walkPayloadInto(root, walker, (file) => files.set(file.path, file));
  return { files, problems };
}

/**
 * Directories handed to the walker at once: enough to keep every copy thread busy, few enough
 * that what they hold (their files as objects) stays small beside a payload of a million files.
 */
const DIRECTORIES_PER_WALK = 8;

/**
 * walkPayload, handing each file to `onFile` as its directory is read instead of collecting
 * them (the walk holds a few directories' files at a time): returns the walk's problems.
 */
export async function walkPayloadInto(
  root: string,
  walker: DirectoryWalker,
  onFile: (file: WalkedFile) => void,
): Promise<ProblemList> {
  const problems = new ProblemList();
  let pending: PendingDirectory[] = [{ relative: '', identity: null }];
  while (pending.length > 0) {
    const next: PendingDirectory[] = [];
    for (let from = 0; from < pending.length; from += DIRECTORIES_PER_WALK) {
      const parts = await walker(root, pending.slice(from, from + DIRECTORIES_PER_WALK));
      for (const part of parts) {
        forEachFile(part, onFile);
        problems.addAll(part.problems, part.problemCount);
        for (const directory of part.directories) next.push(directory);
      }
    }
    pending = next;
  }
  return problems;
}

/** The part's files as WalkedFile, in the order found. */
function forEachFile({ relative, files }: DirectoryPart, onFile: (file: WalkedFile) => void): void {
  if (files.stats.length === 0) return;
  const prefix = relative === '' ? '' : `${relative}/`;
  const { stats } = files;
  let at = 0;
  for (const name of files.names.split('/')) {
    onFile({
      path: prefix + name,
      size: stats[at],
      mtimeMs: stats[at + 1],
      ctimeMs: stats[at + 2],
      dev: stats[at + 3],
      ino: stats[at + 4],
      readable: stats[at + 5] === 1,
    });
    at += FILE_FIELDS;
  }
}

/** The buffers of the parts' files: what a copy thread transfers with them. */
export function transferablesOf(parts: DirectoryPart[]): ArrayBuffer[] {
  return parts
    .map((part) => part.files.stats.buffer as ArrayBuffer)
    .filter((buffer) => buffer.byteLength > 0);
}

/**
 * The same walk of the given directories in blocking calls, for a copy thread (whose event
 * loop serves nothing else): see walkOnThreads.
 */
export function walkDirectoriesSync(
  root: string,
  directories: PendingDirectory[],
): DirectoryPart[] {
  const ids = processIds();
  return directories.map((dir) => {
    let view = root;
    let close: (() => void) | null = null;
    if (dir.identity !== null) {
      const pinned = pinDirectorySync(`${root}/${dir.relative}`, dir.relative);
      if (pinned === null || isProblem(pinned) || pinned.identity !== dir.identity) {
        if (pinned && !isProblem(pinned)) pinned.close();
        throw treeChanged(dir.relative);
      }
      view = pinned.view;
      close = pinned.close;
    }
    try {
      const part = new PartBuilder(dir.relative);
      const named = namedEntries(listNamesSync(view), dir.relative, part);
      part.expect(named.length);
      for (const entry of named) addEntry(view, entry, ids, part);
      return part.done();
    } finally {
      close?.();
    }
  });
}

/** A DirectoryPart as its directory is read: files go into columns sized by `expect`. */
export class PartBuilder {
  private readonly names: string[] = [];
  private stats = new Float64Array(0);
  readonly directories: PendingDirectory[] = [];
  readonly problems: ImportProblem[] = [];
  problemCount = 0;

  constructor(private readonly relative: string) {}

  /** Room for `entries` files (the directory's names: at most that many are files). */
  expect(entries: number): void {
    this.stats = new Float64Array(entries * FILE_FIELDS);
  }

  addFile(name: string, stats: Stats, readable: boolean): void {
    const at = this.names.length * FILE_FIELDS;
    this.names.push(name);
    this.stats[at] = stats.size;
    this.stats[at + 1] = stats.mtimeMs;
    this.stats[at + 2] = stats.ctimeMs;
    this.stats[at + 3] = stats.dev;
    this.stats[at + 4] = stats.ino;
    this.stats[at + 5] = readable ? 1 : 0;
  }

  /** A problem of the part: counted, and kept while the part holds fewer than the cap. */
  addProblem(problem: ImportProblem): void {
    this.problemCount += 1;
    if (this.problems.length < MAX_KEPT_PROBLEMS) this.problems.push(problem);
  }

  done(): DirectoryPart {
    return {
      relative: this.relative,
      files: {
        names: this.names.join('/'),
        stats: this.stats.subarray(0, this.names.length * FILE_FIELDS),
      },
      directories: this.directories,
      problems: this.problems,
      problemCount: this.problemCount,
    };
  }
}

interface NamedEntry {
  name: string;
  relative: string;
}

/** A name read as text holds U+FFFD where its bytes were not valid UTF-8 (or if it held one). */
const hasReplacement = (name: string) => name.includes('\uFFFD');

/**
 * A directory's names: as text, which is cheap, unless one may be invalid UTF-8; then as bytes,
 * so that name is reported rather than mangled (see namedEntries). The kinds come from lstat.
 */
export async function listNames(view: string): Promise<(string | Buffer)[]> {
  const names = await readdir(view);
  return names.some(hasReplacement) ? readdir(view, { encoding: 'buffer' }) : names;
}

function listNamesSync(view: string): (string | Buffer)[] {
  const names = readdirSync(view);
  return names.some(hasReplacement) ? readdirSync(view, { encoding: 'buffer' }) : names;
}

/** The entries whose names are allowed; the others become problems of the part. */
export function namedEntries(
  names: (string | Buffer)[],
  relativeDir: string,
  part: PartBuilder,
): NamedEntry[] {
  const prefix = relativeDir === '' ? '' : `${relativeDir}/`;
  const named: NamedEntry[] = [];
  for (const rawName of names) {
    const name = typeof rawName === 'string' ? rawName : decodeName(rawName);
    if (name === null) {
      part.addProblem({
        code: 'invalid_utf8',
        path: prefix + printableName(rawName),
        message: 'name is not valid UTF-8',
      });
      continue;
    }
    const nameProblem = checkSegment(name);
    if (nameProblem) {
      part.addProblem({
        code: nameProblem,
        path: prefix + printableName(name),
        message: `forbidden name (${nameProblem})`,
      });
      continue;
    }
    const relative = prefix + name;
    if (isPathTooLong(relative)) {
      part.addProblem({
        code: 'name_too_long',
        path: printableName(relative.slice(0, 200)) + '…',
        message: `path longer than ${MAX_PATH_BYTES} bytes (nested too deep)`,
      });
      continue;
    }
    named.push({ name, relative });
  }
  return named;
}

/** One entry, by lstat inside the directory's view: a file, a directory to walk, or a problem. */
export function addEntry(
  view: string,
  { name, relative }: NamedEntry,
  ids: ProcessIds | null,
  part: PartBuilder,
): void {
  let stats: Stats;
  try {
    stats = lstatSync(`${view}/${name}`);
  } catch {
    throw treeChanged(relative);
  }
  const kind = kindOf(stats);
  if (kind === 'directory') {
    part.directories.push({ relative, identity: identityOf(stats) });
  } else if (kind === 'file') {
    part.addFile(name, stats, permitsRead(stats, ids));
  } else {
    part.addProblem({ code: kind, path: relative, message: `${kind} not allowed in a payload` });
  }
}
