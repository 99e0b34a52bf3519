/**
 * A serialised response and its entity tag. The body is kept as UTF-8 bytes, not a string:
 * a hit then goes to the socket as is, instead of re-encoding megabytes of JSON per request.
 * A large body stays in the chunks it was built in (see json-body.ts): joining them would hold
 * it twice while it is built.
 */
export interface CachedResponse {
  body: readonly Buffer[];
  /** The body's length in bytes. */
  bytes: number;
  etag: string;
}

/**
 * What one entry costs besides its strings and body: the map slot, the entry object, the
 * Buffer and ArrayBuffer objects and the allocator's own bookkeeping. Measured with unique
 * public URLs (heap and external memory after a full collection, 10,000 entries): an entry
 * of a small body took 720–800 bytes in all and is counted as 910–990, so the byte limit
 * errs on the safe side.
 */
export const ENTRY_OVERHEAD_BYTES = 512;

/** Bytes a JavaScript string may hold in memory (two per character at worst). */
export const stringBytes = (text: string): number => 2 * text.length;

export interface ResponseCacheLimits {
  maxEntries: number;
  /** Everything the cache holds: keys, bodies, tags, extras and per-entry overhead. */
  maxBytes: number;
  /** What an entry costs besides its strings and body; ENTRY_OVERHEAD_BYTES unless given. */
  overheadBytes?: number;
}

/** A copy of `bytes` in an allocation of its own, for a body a cache keeps. */
export function ownedCopy(bytes: Uint8Array): Buffer {
  // Buffer.from(bytes) of a short body is a slice of a shared 8 KiB pool: one cached slice would
  // keep the whole pool slab alive, 8 KiB held for a 40-byte answer.
  const body = Buffer.allocUnsafeSlow(bytes.length);
  body.set(bytes);
  return body;
}

/**
 * In-process LRU of serialised responses, bounded by its number of entries and by all the
 * bytes they hold, whatever clients ask for. Keys carry the catalog data version, so a write
 * makes old entries unreachable; they age out as new ones arrive. `extraBytes` counts what a
 * subtype keeps besides body and tag (the fast index's headers).
 */
export class ResponseCache<T extends CachedResponse = CachedResponse> {
  private readonly entries = new Map<string, { entry: T; bytes: number; stamp: number }>();
  private bytes = 0;
  /** Insertions so far, moves to the newest end included: an entry's `stamp` is its place. */
  private stamp = 0;

  constructor(
    private readonly limits: ResponseCacheLimits,
    private readonly extraBytes: (entry: T) => number = () => 0,
  ) {}

  get(key: string): T | undefined {
    const slot = this.entries.get(key);
    if (slot === undefined) return undefined;
    // Re-insert to mark as most recently used (Map keeps insertion order), unless fewer than
    // half the entries can have been inserted after it: it is among the newest half already,
    // and moving it would cost a Map delete and insert per hit (a crawl's read-ahead entries
    // are each read once, just after they were filed). Such an entry is still evicted only
    // after at least half the cache's entries are inserted after it.
    if (2 * (this.stamp - slot.stamp) >= this.entries.size) {
      this.entries.delete(key);
      slot.stamp = ++this.stamp;
      this.entries.set(key, slot);
    }
    return slot.entry;
  }

  /** Stores the entry; false when it alone is larger than the byte bound (not kept). */
  set(key: string, entry: T): boolean {
    const bytes =
      (this.limits.overheadBytes ?? ENTRY_OVERHEAD_BYTES) +
      stringBytes(key) +
      entry.bytes +
      stringBytes(entry.etag) +
      this.extraBytes(entry);
    if (bytes > this.limits.maxBytes) return false;
    this.delete(key);
    this.entries.set(key, { entry, bytes, stamp: ++this.stamp });
    this.bytes += bytes;
    for (const oldKey of this.entries.keys()) {
      if (this.bytes <= this.limits.maxBytes && this.entries.size <= this.limits.maxEntries) break;
      this.delete(oldKey);
    }
    return true;
  }

  /** Entries held now. */
  get size(): number {
    return this.entries.size;
  }

  /** Bytes held now, as counted against `maxBytes`. */
  get heldBytes(): number {
    return this.bytes;
  }

  private delete(key: string): void {
    const slot = this.entries.get(key);
    if (slot === undefined) return;
    this.entries.delete(key);
    this.bytes -= slot.bytes;
  }
}
