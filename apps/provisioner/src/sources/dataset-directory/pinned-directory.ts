import { closeSync, constants, existsSync, Stats } from 'node:fs';
import {
  describeKind,
  isProblem,
  kindOf,
  openChecked,
  openCheckedSync,
  OpenRules,
  refusal,
  SourceProblem,
} from './source-file';

/**
 * A directory of a source opened once, without following a link, and then reached through its
 * descriptor: on Linux `/proc/self/fd/<fd>/<name>` resolves `<name>` inside the very directory
 * that was opened (like openat(2), which Node does not offer), so replacing the directory by a
 * link to another submission's data after it was checked changes nothing for the reader.
 * Elsewhere `view` is the path itself, and callers' identity checks (dev and inode of what
 * they opened) are what stands between a swap and a wrong read.
 */
const PROC_FD = '/proc/self/fd';
const HAS_PROC_FD = existsSync(PROC_FD);

const DIRECTORY_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

/** Device and inode: what an import compares to be sure it reads the directory a listing saw. */
export function identityOf(stats: Stats): string {
  return `${stats.dev}:${stats.ino}`;
}

function viewOf(fd: number, path: string): string {
  return HAS_PROC_FD ? `${PROC_FD}/${fd}` : path;
}

/** The verdict on what lstat found where a directory must be; null when it is one. */
export function checkDirectory(stats: Stats, path: string): SourceProblem | null {
  const kind = kindOf(stats);
  if (kind === 'directory') return null;
  return refusal(
    kind === 'symlink' ? 'symlink' : 'not_a_directory',
    path,
    `is ${describeKind(kind)}, not a directory`,
  );
}

const DIRECTORY_RULES: OpenRules = { flags: DIRECTORY_FLAGS, verdict: checkDirectory };

export interface PinnedDirectorySync {
  stats: Stats;
  /** Path to reach the directory's entries through (append `/<name>`). */
  view: string;
  /** Device and inode of the opened directory. */
  identity: string;
  close(): void;
}

/** Opens a source directory that must not be a link; null when absent. */
export function pinDirectorySync(
  absolute: string,
  path: string,
): PinnedDirectorySync | SourceProblem | null {
  const opened = openCheckedSync(absolute, path, DIRECTORY_RULES);
  if (opened === null || isProblem(opened)) return opened;
  const { fd, stats } = opened;
  return {
    stats,
    view: viewOf(fd, absolute),
    identity: identityOf(stats),
    close: () => closeSync(fd),
  };
}

export interface PinnedDirectory {
  stats: Stats;
  view: string;
  identity: string;
  close(): Promise<void>;
}

/** pinDirectorySync through libuv's thread pool. */
export async function pinDirectory(
  absolute: string,
  path: string,
): Promise<PinnedDirectory | SourceProblem | null> {
  const opened = await openChecked(absolute, path, DIRECTORY_RULES);
  if (opened === null || isProblem(opened)) return opened;
  const { handle, stats } = opened;
  return {
    stats,
    view: viewOf(handle.fd, absolute),
    identity: identityOf(stats),
    close: () => handle.close(),
  };
}
