import { ResponseCache } from './response-cache';

/**
 * What one tag entry costs besides its key and tag strings: the map slot, the entry object and
 * its fields (the header list and route are shared, see `intern`), an empty body array.
 * Counted generously, not measured: a V8 Map slot and two small objects take well under this.
 */
export const TAG_ENTRY_OVERHEAD_BYTES = 160;
/** Distinct 304 header lists kept (the app's headers are the same for every record). */
const HEADER_LISTS = 32;
const NO_BODY: readonly Buffer[] = Object.freeze([]);

export interface TagEntry {
  etag: string;
  /** The headers a 304 sends besides ETag and the request id, as `writeHead` takes them. */
  headers: readonly string[];
  /** The route template, for the metrics. */
  route: string;
}

export interface EntityTagLimits {
  /** 0: nothing is kept. */
  maxEntries: number;
  maxBytes: number;
}

/**
 * An LRU of entity tags only, no bodies: for a URL a caller read at a data version, the tag its
 * answer carried. Apart from the response caches and with bounds of its own
 * (ETAG_INDEX_MAX_ENTRIES, ETAG_INDEX_MAX_BYTES), so a crawl that reads more records than the
 * fast-read index keeps still gets its conditional GETs answered before the framework. Keys
 * carry the data version: a write makes every entry unreachable (they age out).
 */
export class EntityTags {
  private readonly index?: ResponseCache<TagEntry & { body: readonly Buffer[]; bytes: 0 }>;
  private readonly headerLists = new Map<string, readonly string[]>();

  constructor(limits: EntityTagLimits) {
    if (limits.maxEntries > 0)
      this.index = new ResponseCache({ ...limits, overheadBytes: TAG_ENTRY_OVERHEAD_BYTES });
  }

  get(key: string): TagEntry | undefined {
    return this.index?.get(key);
  }

  /** Keeps the tag; false when the index keeps nothing or the header lists are all taken. */
  set(key: string, etag: string, headers: string[], route: string): boolean {
    const shared = this.intern(headers);
    if (this.index === undefined || shared === undefined) return false;
    return this.index.set(key, { etag, headers: shared, route, body: NO_BODY, bytes: 0 });
  }

  /** Entries and bytes held now, as counted against the limits (shared header lists aside). */
  usage(): { entries: number; bytes: number } {
    return { entries: this.index?.size ?? 0, bytes: this.index?.heldBytes ?? 0 };
  }

  /** One copy of each header list: every record of a route sends the same app headers. */
  private intern(headers: string[]): readonly string[] | undefined {
    const text = headers.join('\n');
    const known = this.headerLists.get(text);
    if (known !== undefined) return known;
    if (this.headerLists.size >= HEADER_LISTS) return undefined;
    const list = Object.freeze([...headers]);
    this.headerLists.set(text, list);
    return list;
  }
}
