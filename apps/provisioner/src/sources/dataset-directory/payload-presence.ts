import { Dir, opendirSync } from 'node:fs';
import { PathHashSet } from './path-hash-set';
import { isDirectoryEntry } from './source-file';

/**
 * Entries a walk reads beyond twice the manifest's paths (directories, unlisted files) before
 * it gives up: the depositor decides how many files the payload holds, the manifest's size
 * limit bounds the paths; past this, the caller looks the paths not found up one by one.
 */
const WALK_SLACK_ENTRIES = 65_536;

export function walkBudget(paths: PathHashSet): number {
  return 2 * paths.size + WALK_SLACK_ENTRIES;
}

/**
 * Reads the payload's whole tree once (one directory read per directory, nothing per file) and
 * marks in `paths` every entry it finds: an import request's check that each manifest path
 * exists, without a lookup per path (a million paths: under a second, against ten with a
 * lookup each through the pinned view). A name counts whatever it is (preflight refuses links,
 * FIFOs and directories named as files, with the full list); only directories are entered,
 * never a link to one, so a path through a link is not found.
 *
 * Returns true when the whole tree was read within `maxEntries`: a path left unmarked then
 * does not exist. False when it stopped early or a directory could not be read: the paths left
 * unmarked must be looked up one by one (PayloadListing). The set holds 64-bit hashes, so a
 * missing path may count as found when an unlisted file shares its hash (about one chance in
 * 10^8 at a million paths): readiness only, as the import's preflight checks every file.
 *
 * `root`: the payload directory's view (see PinnedDirectory).
 */
export function markPresentEntries(root: string, paths: PathHashSet, maxEntries: number): boolean {
  const pending = [''];
  let entries = 0;
  while (pending.length > 0) {
    const dir = pending.pop()!;
    let handle: Dir;
    try {
      handle = opendirSync(dir === '' ? root : `${root}/${dir}`, { bufferSize: 256 });
    } catch {
      return false;
    }
    try {
      for (let entry = handle.readSync(); entry; entry = handle.readSync()) {
        if (++entries > maxEntries) return false;
        const path = dir === '' ? entry.name : `${dir}/${entry.name}`;
        paths.markPresent(path);
        if (isDirectoryEntry(entry, `${root}/${path}`)) pending.push(path);
      }
    } catch {
      return false;
    } finally {
      handle.closeSync();
    }
  }
  return true;
}
