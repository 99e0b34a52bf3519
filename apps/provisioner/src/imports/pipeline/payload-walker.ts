import { lstatSync, Stats } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { mapTimeSliced } from '../../common/time-sliced';
import {
  checkSegment,
  decodeName,
  printableName,
} from '../../sources/dataset-directory/payload-path';
import { identityOf, pinDirectory } from '../../sources/dataset-directory/pinned-directory';
import { isProblem, kindOf } from '../../sources/dataset-directory/source-file';
import { ImportProblem, ImportTransientError } from './import-errors';

export interface WalkedFile {
  /** POSIX path relative to the payload root. */
  path: string;
  size: number;
  mtimeMs: number;
  /** Device and inode: the copy opens exactly this file or fails. */
  dev: number;
  ino: number;
  /** The permission bits let this process read it; false: they may not (access(2) decides). */
  readable: boolean;
}

/** Who this process is, for reading permission bits (getuid is absent off POSIX). */
interface ProcessIds {
  uid: number;
  groups: Set<number>;
}

function processIds(): ProcessIds | null {
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
  problems: ImportProblem[];
}

interface PendingDirectory {
  /** Relative path without a trailing slash ('' for the root). */
  relative: string;
  /** Device and inode lstat found inside its parent; null for the (pinned) root. */
  identity: string | null;
}

function treeChanged(path: string): ImportTransientError {
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
 * instead of stopping at the first, because the submitter needs the full list. Iterative so
 * depth cannot overflow the stack; one directory open at a time.
 */
export async function walkPayload(root: string): Promise<WalkResult> {
  const files = new Map<string, WalkedFile>();
  const problems: ImportProblem[] = [];
  const pending: PendingDirectory[] = [{ relative: '', identity: null }];
  const ids = processIds();
  while (pending.length > 0) {
    const dir = pending.pop()!;
    let view = root;
    let close: (() => Promise<void>) | null = null;
    if (dir.identity !== null) {
      const pinned = await pinDirectory(`${root}/${dir.relative}`, dir.relative);
      if (pinned === null || isProblem(pinned) || pinned.identity !== dir.identity) {
        if (pinned && !isProblem(pinned)) await pinned.close();
        throw treeChanged(dir.relative);
      }
      view = pinned.view;
      close = pinned.close;
    }
    try {
      await walkOne(view, dir.relative, files, problems, pending, ids);
    } finally {
      await close?.();
    }
  }
  return { files, problems };
}

async function walkOne(
  view: string,
  relativeDir: string,
  files: Map<string, WalkedFile>,
  problems: ImportProblem[],
  pending: PendingDirectory[],
  ids: ProcessIds | null,
): Promise<void> {
  const prefix = relativeDir === '' ? '' : `${relativeDir}/`;
  const entries = await readdir(view, { withFileTypes: true, encoding: 'buffer' });
  const found: { name: string; relative: string }[] = [];
  for (const entry of entries) {
    const rawName = entry.name;
    const name = decodeName(rawName);
    const shownPath = prefix + printableName(name ?? rawName);
    if (name === null) {
      problems.push({ code: 'invalid_utf8', path: shownPath, message: 'name is not valid UTF-8' });
      continue;
    }
    const nameProblem = checkSegment(name);
    if (nameProblem) {
      problems.push({
        code: nameProblem,
        path: shownPath,
        message: `forbidden name (${nameProblem})`,
      });
      continue;
    }
    found.push({ name, relative: prefix + name });
  }
  // Blocking lstat in time slices: ~10x cheaper per file than a thread-pool round trip.
  await mapTimeSliced(found, ({ name, relative }) => {
    let stats: Stats;
    try {
      stats = lstatSync(`${view}/${name}`);
    } catch {
      throw treeChanged(relative);
    }
    const kind = kindOf(stats);
    if (kind === 'directory') {
      pending.push({ relative, identity: identityOf(stats) });
    } else if (kind === 'file') {
      files.set(relative, {
        path: relative,
        size: stats.size,
        mtimeMs: stats.mtimeMs,
        dev: stats.dev,
        ino: stats.ino,
        readable: permitsRead(stats, ids),
      });
    } else {
      problems.push({ code: kind, path: relative, message: `${kind} not allowed in a payload` });
    }
  });
}
