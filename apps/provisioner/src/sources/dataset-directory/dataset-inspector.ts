import { mapTimeSliced } from '../../common/time-sliced';
import { DirectoryInspection, inspectDatasetDirectory } from './dataset-directory';
import { signatureOfPaths } from './file-signature';

interface CachedInspection {
  watched: string[];
  key: string;
  inspection: DirectoryInspection;
}

/** About 300 bytes each: a million datasets cost some 300 MB before the oldest are dropped. */
const DEFAULT_MAX_ENTRIES = 1_000_000;

/**
 * Readiness of dataset directories for listings and diffs, cached per directory and keyed by
 * the signature (inode, size, mtime) of the directory, payload/ and the manifests: an
 * unchanged dataset costs two to three stat calls instead of a directory read, manifest reads
 * and one stat per payload file.
 *
 * What the key notices: the marker or dataset.json written, removed or replaced; a manifest
 * changed in any way; files added to or removed from payload/ itself. What it does not: a
 * file deeper in payload/ removed or resized after the marker was written, until one of the
 * above changes (the deliverer's protocol writes the marker last, and the import re-checks
 * everything in its preflight whatever a listing said). Imports never use the cache.
 */
export class DatasetInspector {
  private readonly cache = new Map<string, CachedInspection>();

  constructor(
    private readonly maxEntries = DEFAULT_MAX_ENTRIES,
    private readonly clock: () => number = Date.now,
  ) {}

  /** Cached when nothing watched changed since the last reading. */
  inspect(dir: string): DirectoryInspection {
    const cached = this.cache.get(dir);
    if (cached) {
      const now = signatureOfPaths(cached.watched, this.clock());
      if (now.key === cached.key) return cached.inspection;
    }
    return this.refresh(dir);
  }

  /** Reads the directory whatever the cache holds, and remembers the result. */
  refresh(dir: string): DirectoryInspection {
    // Taken before reading: a change made while we read has an mtime after this instant,
    // so the racy rule keeps it out of the cache.
    const started = this.clock();
    const { inspection, watched } = inspectDatasetDirectory(dir);
    const signature = signatureOfPaths(watched, started);
    this.cache.delete(dir);
    if (signature.settled) {
      if (this.cache.size >= this.maxEntries) this.cache.delete(this.cache.keys().next().value!);
      this.cache.set(dir, { watched, key: signature.key, inspection });
    }
    return inspection;
  }

  /** Many directories, in order, in time slices so other requests are not held up. */
  inspectMany(dirs: readonly string[]): Promise<DirectoryInspection[]> {
    return mapTimeSliced(dirs, (dir) => this.inspect(dir));
  }

  get size(): number {
    return this.cache.size;
  }
}
