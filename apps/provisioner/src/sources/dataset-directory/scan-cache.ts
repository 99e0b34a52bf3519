import { ScanAnswer, ScanItem } from './source-scan';

/** A Map entry, the directory path and the signature key: what an entry costs beyond its value. */
const ENTRY_OVERHEAD_BYTES = 500;

export interface ScanCacheLimits {
  maxEntries: number;
  /** Estimated memory of all entries (overhead plus the bytes their answers weigh). */
  maxBytes: number;
}

interface Entry<T> {
  key: string;
  value: T;
  weight: number;
}

/**
 * Answers of the source-scan thread (dataset inspections, submission documents) for listings
 * and diffs, keyed by directory and kept while the signature (inode, size and mtime, by lstat)
 * of the paths they depend on is unchanged: an unchanged dataset costs a few lstat calls on the
 * scan thread instead of reading its manifests and stat'ing every payload file. Anything changed
 * within the last two seconds is not cached (coarse timestamps). Bounded by entries and by
 * bytes, oldest dropped first: depositors decide how large their documents are.
 *
 * What a dataset's key notices: the marker or dataset.json written, removed or replaced; a
 * manifest changed in any way; files added to or removed from payload/ itself. What it does
 * not: a file deeper in payload/ removed or resized after the marker was written, until one of
 * the above changes (the deliverer's protocol writes the marker last, and the import re-checks
 * everything in its preflight whatever a listing said). Imports never use the cache.
 */
export class ScanCache<T> {
  private readonly entries = new Map<string, Entry<T>>();
  private bytes = 0;

  constructor(
    private readonly scan: (items: ScanItem[]) => Promise<(ScanAnswer<T> | null)[]>,
    private readonly limits: ScanCacheLimits,
  ) {}

  /** Many directories, in order; each from the cache when nothing it depends on changed. */
  async readMany(dirs: readonly string[]): Promise<T[]> {
    const held = dirs.map((dir) => this.entries.get(dir));
    const answers = await this.scan(dirs.map((dir, i) => ({ dir, known: held[i]?.key ?? null })));
    return answers.map((answer, i) => {
      if (answer === null) return held[i]!.value;
      this.remember(dirs[i], answer);
      return answer.value;
    });
  }

  /** Keeps an answer read by the caller itself (a fresh read) for later listings. */
  remember(dir: string, answer: ScanAnswer<T>): void {
    this.forget(dir);
    const weight = ENTRY_OVERHEAD_BYTES + answer.bytes;
    if (answer.key === null || weight > this.limits.maxBytes) return;
    for (const [oldest] of this.entries) {
      if (this.entries.size < this.limits.maxEntries && this.bytes + weight <= this.limits.maxBytes)
        break;
      this.forget(oldest);
    }
    this.entries.set(dir, { key: answer.key, value: answer.value, weight });
    this.bytes += weight;
  }

  get size(): number {
    return this.entries.size;
  }

  private forget(dir: string): void {
    const entry = this.entries.get(dir);
    if (!entry) return;
    this.entries.delete(dir);
    this.bytes -= entry.weight;
  }
}
