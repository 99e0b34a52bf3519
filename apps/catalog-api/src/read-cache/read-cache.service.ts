import { Inject, Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { CatalogVersionRepository } from '../catalog-version/catalog-version.repository';
import { CatalogVersionTracker } from '../catalog-version/catalog-version-tracker';
import { CATALOG_SETTINGS, CatalogSettings } from '../config/catalog.settings';
import { jsonBody } from './json-body';
import { CachedResponse, ResponseCache } from './response-cache';

/** What makes two reads the same answer. */
export interface ReadKey {
  /** The handler (class and method). */
  route: string;
  /** Who reads: the viewer's kind and id, or anonymous. */
  identity: string;
  /** Path and query, key-carrying query parameters left out, the rest in a fixed order. */
  request: string;
  /**
   * What of the request the answer depends on (path and the query parameters the route reads),
   * asked before the lookup and again after a build, which may have taught it more names.
   */
  answer: () => string;
  /** When the answer stops being right without any write (epoch ms): data that depends on the date. */
  expiresAt?: number;
  /** See CachedReadOptions.singleStatement. */
  singleStatement?: boolean;
}

/** Runs the route's handler on `manager` and returns what it answered. */
export type Producer = (manager: EntityManager) => Promise<unknown>;

export interface LoadedRead {
  /** The data version the entry is filed under. */
  version: string;
  entry: CachedResponse;
}

/**
 * The response cache of the catalog's reads. A miss builds the body in one REPEATABLE READ
 * transaction together with the version it is filed under, so an entry never mixes data from
 * before and after a write. Concurrent misses of the same key and version share one build:
 * right after a write every reader is cold at once, and each rebuilding the same answer would
 * multiply the work by the number of readers.
 */
@Injectable()
export class ReadCacheService {
  private readonly cache: ResponseCache;
  private readonly building = new Map<string, Promise<LoadedRead>>();
  /**
   * Answers too large for the cache, while something still holds them (a response being sent
   * to a slow reader): the same read at the same version gets the same bytes instead of a
   * build of its own, so many slow readers of one large answer hold one copy of it.
   */
  private readonly unkept = new Map<string, WeakRef<CachedResponse>>();
  private readonly forget = new FinalizationRegistry<string>((key) => {
    if (this.unkept.get(key)?.deref() === undefined) this.unkept.delete(key);
  });
  /** Builds run and misses that joined one already running, by route (for the metrics). */
  readonly counts = { builds: new Map<string, number>(), joined: new Map<string, number>() };

  constructor(
    @Inject(CATALOG_SETTINGS) settings: CatalogSettings,
    private readonly dataSource: DataSource,
    private readonly versions: CatalogVersionRepository,
    private readonly tracker: CatalogVersionTracker,
  ) {
    this.cache = new ResponseCache({
      maxEntries: settings.RESPONSE_CACHE_MAX_ENTRIES,
      maxBytes: settings.RESPONSE_CACHE_MAX_BYTES,
    });
  }

  /** Entries and bytes held now (for the metrics). */
  usage(): { entries: number; bytes: number } {
    return { entries: this.cache.size, bytes: this.cache.heldBytes };
  }

  /** The answer to `key` at the current version: from the cache, a build running, or a new build. */
  async load(key: ReadKey, produce: Producer): Promise<LoadedRead> {
    const seen = this.tracker.known() ?? (await this.versions.current());
    const answerKey = this.cacheKey(seen, key, key.answer());
    const hit = this.cache.get(answerKey) ?? this.unkept.get(answerKey)?.deref();
    if (hit !== undefined) return { version: seen, entry: hit };
    // Only the very same request joins a build: which parameters matter is known after it.
    const buildKey = this.cacheKey(seen, key, key.request);
    const running = this.building.get(buildKey);
    if (running !== undefined) {
      count(this.counts.joined, key.route);
      return running;
    }
    const build = this.build(seen, key, produce).finally(() => this.building.delete(buildKey));
    this.building.set(buildKey, build);
    return build;
  }

  private async build(seen: string, key: ReadKey, produce: Producer): Promise<LoadedRead> {
    count(this.counts.builds, key.route);
    // Filed under `seen`, a body may be newer than its version, never older: the next version
    // (its notification, or the re-read after a write) makes the entry unreachable.
    const { version, entry } = key.singleStatement
      ? { version: seen, entry: await jsonBody(await produce(this.dataSource.manager)) }
      : await this.dataSource.transaction('REPEATABLE READ', async (manager) => ({
          version: await this.versions.current(manager),
          // Serialised inside the transaction: a handler may hand over pages read as they go.
          entry: await jsonBody(await produce(manager)),
        }));
    const answerKey = this.cacheKey(version, key, key.answer());
    if (!this.cache.set(answerKey, entry)) {
      this.unkept.set(answerKey, new WeakRef(entry));
      this.forget.register(entry, answerKey);
    }
    return { version, entry };
  }

  private cacheKey(version: string, key: ReadKey, request: string): string {
    return `${version}|${key.identity}|${key.route}|${request}`;
  }
}

function count(counts: Map<string, number>, route: string): void {
  counts.set(route, (counts.get(route) ?? 0) + 1);
}
