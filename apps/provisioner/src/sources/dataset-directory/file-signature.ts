import { Stats } from 'node:fs';
import { lstatIfPresent } from './source-file';

/**
 * How recent a change must be for its mtime not to be trusted: file-system timestamps are
 * coarse (a kernel tick locally, up to seconds on NFS or FAT), so a second change in the same
 * tick as the one we saw would leave the mtime unchanged. Anything changed this recently is
 * simply not cached (git's "racily clean" rule).
 */
export const RACY_WINDOW_MS = 2000;

/** Identity and version of a file or directory: inode, size and mtime; '-' when absent. */
export function signatureOf(stats: Stats | undefined): string {
  return stats ? `${stats.ino}:${stats.size}:${stats.mtimeMs}` : '-';
}

export interface Signature {
  key: string;
  /** False when something changed within RACY_WINDOW_MS of `now`: do not cache. */
  settled: boolean;
}

/**
 * One signature over several paths, lstat'ed in order (never following a link: a link swapped
 * in for a file or directory changes the signature, whatever it points to).
 */
export function signatureOfPaths(paths: readonly string[], now: number): Signature {
  let key = '';
  let settled = true;
  for (const path of paths) {
    const stats = lstatIfPresent(path) ?? undefined;
    key += `${signatureOf(stats)}|`;
    if (stats && stats.mtimeMs > now - RACY_WINDOW_MS) settled = false;
  }
  return { key, settled };
}

/**
 * Whether paths still have the signature `known` (from signatureOfPaths), cheaper than
 * computing it again: `paths[0]` is a directory and the others are entries of it, so while the
 * directory's own signature (its mtime) is unchanged, an entry that was absent still is (adding
 * an entry changes the directory's mtime) and is not looked up again.
 */
export function stillSigned(paths: readonly string[], known: string): boolean {
  const parts = known.split('|');
  if (parts.length !== paths.length + 1) return false;
  for (let i = 0; i < paths.length; i++) {
    if (i > 0 && parts[i] === '-') continue;
    if (signatureOf(lstatIfPresent(paths[i]) ?? undefined) !== parts[i]) return false;
  }
  return true;
}
