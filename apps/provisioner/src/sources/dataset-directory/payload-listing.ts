import { Dir, opendirSync } from 'node:fs';
import { isDirectoryEntry, isMissing, lstatIfPresent } from './source-file';

export interface ListingLimits {
  /** Entries read from one directory at most: a larger one is looked up path by path. */
  maxListedEntries: number;
  /**
   * Names held for all directories together; past it, a directory not yet listed is looked up
   * path by path, as a large one is.
   */
  maxHeldNames: number;
}

/**
 * Memory: at most ~25 MB of names on the source-scan thread (maxHeldNames and one directory's
 * maxListedEntries), whatever the payload holds.
 */
const DEFAULT_LIMITS: ListingLimits = { maxListedEntries: 65_536, maxHeldNames: 262_144 };

/** A directory's names, each with whether it is a directory; 'large' past maxListedEntries. */
type Listing = Map<string, boolean> | 'large';

/**
 * Answers "does this payload path exist?" path by path with one directory read per directory
 * instead of one lstat per path: a lookup through the pinned directory's /proc view costs
 * ~5 µs, so 10,000 paths cost ~45 ms where reading their 20 directories costs ~10. For an
 * import request's readiness (its 409), for the paths its walk of the payload did not reach
 * (see markPresentEntries): nothing is read from the files, and the import's preflight checks
 * every file again. Like the lookup path by path, a name counts
 * whatever it is (a link or a FIFO is present, and refused by preflight with the full list);
 * a directory on the way must be a directory, never a link to one.
 */
export class PayloadListing {
  private readonly listings = new Map<string, Listing>();
  private held = 0;

  /** `root`: the payload directory's view (see PinnedDirectory). */
  constructor(
    private readonly root: string,
    private readonly limits: ListingLimits = DEFAULT_LIMITS,
  ) {}

  has(path: string): boolean {
    let dir = '';
    let start = 0;
    for (;;) {
      const slash = path.indexOf('/', start);
      const name = slash < 0 ? path.slice(start) : path.slice(start, slash);
      const listing = this.listing(dir);
      if (listing === null) return false;
      const isDirectory =
        listing === 'large' ? this.lookUp(dir, name) : (listing.get(name) ?? null);
      if (isDirectory === null) return false;
      if (slash < 0) return true;
      if (!isDirectory) return false;
      dir = path.slice(0, slash);
      start = slash + 1;
    }
  }

  /** One name by lstat (in a directory too large to list): null when absent. */
  private lookUp(dir: string, name: string): boolean | null {
    const stats = lstatIfPresent(`${this.root}/${dir === '' ? '' : `${dir}/`}${name}`);
    return stats ? stats.isDirectory() : null;
  }

  /** The directory's listing, read once; null when it cannot be read (gone, not a directory). */
  private listing(dir: string): Listing | null {
    const known = this.listings.get(dir);
    if (known) return known;
    // Listings are kept, never dropped and read again: a manifest that interleaves more
    // directories than the budget holds would otherwise read a whole directory again for
    // nearly every path (a quadratic walk: minutes at 300,000 files). Past the budget, the
    // directories not held cost one lstat per path instead.
    if (this.held >= this.limits.maxHeldNames) return 'large';
    let handle: Dir;
    try {
      handle = opendirSync(dir === '' ? this.root : `${this.root}/${dir}`, { bufferSize: 256 });
    } catch (error) {
      if (isMissing(error) || (error as NodeJS.ErrnoException).code === 'ELOOP') return null;
      throw error;
    }
    let listing: Listing = new Map();
    try {
      for (let entry = handle.readSync(); entry; entry = handle.readSync()) {
        if (listing.size >= this.limits.maxListedEntries) {
          listing = 'large';
          break;
        }
        const path = `${this.root}/${dir === '' ? '' : `${dir}/`}${entry.name}`;
        listing.set(entry.name, isDirectoryEntry(entry, path));
      }
    } finally {
      handle.closeSync();
    }
    this.listings.set(dir, listing);
    this.held += listing === 'large' ? 0 : listing.size;
    return listing;
  }
}
