/**
 * A serialised response and its entity tag. The body is kept as UTF-8 bytes, not a string:
 * a hit then goes to the socket as is, instead of re-encoding megabytes of JSON per request.
 */
export interface CachedResponse {
  body: Buffer;
  etag: string;
}

/**
 * In-process LRU of serialised responses, bounded by total body size. Keys carry the catalog
 * data version, so a write makes old entries unreachable; they age out as new ones arrive.
 */
export class ResponseCache<T extends CachedResponse = CachedResponse> {
  private readonly entries = new Map<string, T>();
  private bytes = 0;

  constructor(private readonly maxBytes: number) {}

  get(key: string): T | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    // Re-insert to mark as most recently used (Map keeps insertion order).
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry;
  }

  set(key: string, entry: T): void {
    const size = entry.body.length;
    if (size > this.maxBytes) return;
    const previous = this.entries.get(key);
    if (previous !== undefined) {
      this.entries.delete(key);
      this.bytes -= previous.body.length;
    }
    this.entries.set(key, entry);
    this.bytes += size;
    for (const [oldKey, old] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(oldKey);
      this.bytes -= old.body.length;
    }
  }

  get size(): number {
    return this.entries.size;
  }
}
