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

/** An entry with its neighbours in the order of use (a doubly linked list). */
interface Slot<T> {
  key: string;
  entry: T;
  bytes: number;
  older?: Slot<T>;
  newer?: Slot<T>;
}

/**
 * In-process LRU of serialised responses, bounded by its number of entries and by all the
 * bytes they hold, whatever clients ask for. Keys carry the catalog data version, so a write
 * makes old entries unreachable; they age out as new ones arrive. `extraBytes` counts what a
 * subtype keeps besides body and tag (the fast index's headers).
 *
 * The order of use is a linked list beside the `Map`, not the `Map`'s own insertion order: a
 * hit then moves its entry with a few pointers, and an eviction takes the oldest entry at once.
 * Re-inserting into the `Map` on every hit and evicting through a fresh `keys()` iterator made
 * V8 step over every deleted slot at the front of the table on each insertion of a full cache
 * (docs/decisions/response-cache-linked-lru.md).
 */
export class ResponseCache<T extends CachedResponse = CachedResponse> {
  private readonly entries = new Map<string, Slot<T>>();
  private oldest?: Slot<T>;
  private newest?: Slot<T>;
  private bytes = 0;

  constructor(
    private readonly limits: ResponseCacheLimits,
    private readonly extraBytes: (entry: T) => number = () => 0,
  ) {}

  get(key: string): T | undefined {
    const slot = this.entries.get(key);
    if (slot === undefined) return undefined;
    // Marked as most recently used.
    if (slot !== this.newest) {
      this.unlink(slot);
      this.append(slot);
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
    const slot: Slot<T> = { key, entry, bytes };
    this.entries.set(key, slot);
    this.append(slot);
    this.bytes += bytes;
    while (
      this.oldest !== undefined &&
      (this.bytes > this.limits.maxBytes || this.entries.size > this.limits.maxEntries)
    )
      this.delete(this.oldest.key);
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
    this.unlink(slot);
    this.bytes -= slot.bytes;
  }

  /** Puts a slot that is in no list at the newest end. */
  private append(slot: Slot<T>): void {
    slot.older = this.newest;
    slot.newer = undefined;
    if (this.newest === undefined) this.oldest = slot;
    else this.newest.newer = slot;
    this.newest = slot;
  }

  private unlink(slot: Slot<T>): void {
    if (slot.older === undefined) this.oldest = slot.newer;
    else slot.older.newer = slot.newer;
    if (slot.newer === undefined) this.newest = slot.older;
    else slot.newer.older = slot.older;
    slot.older = slot.newer = undefined;
  }
}
