import { Inject, Injectable } from '@nestjs/common';
import { Counter, Gauge, Registry } from 'prom-client';
import { METRICS_REGISTRY } from '@app/platform';
import { FastReads } from './fast-reads';
import { ReadCacheService } from './read-cache.service';

/**
 * What the read cache holds and does, read at scrape time. Entries and counted bytes next to
 * their limits (RESPONSE_CACHE_MAX_*, and ETAG_INDEX_MAX_* for the entity tags) show an operator whether
 * the caches are full and how much of the replica's memory they take; builds and joined misses
 * show how often answers are rebuilt and how many cold readers shared a build.
 */
@Injectable()
export class ReadCacheMetrics {
  constructor(
    @Inject(METRICS_REGISTRY) registry: Registry,
    service: ReadCacheService,
    fastReads: FastReads,
  ) {
    const caches = {
      responses: service,
      'fast-reads': fastReads,
      'entity-tags': { usage: () => fastReads.tagUsage() },
    };
    const gauge = (
      name: string,
      help: string,
      read: (usage: { entries: number; bytes: number }) => number,
    ) =>
      new Gauge({
        name,
        help,
        labelNames: ['cache'],
        registers: [registry],
        collect() {
          for (const [cache, owner] of Object.entries(caches))
            this.set({ cache }, read(owner.usage()));
        },
      });
    gauge(
      'catalog_response_cache_entries',
      'Entries held by each response cache',
      (u) => u.entries,
    );
    gauge(
      'catalog_response_cache_bytes',
      'Bytes held by each response cache (bodies, keys, headers and per-entry overhead)',
      (u) => u.bytes,
    );
    const counter = (name: string, help: string, counts: Map<string, number>) =>
      new Counter({
        name,
        help,
        labelNames: ['route'],
        registers: [registry],
        collect() {
          // The service counts; the counter shows its totals.
          this.reset();
          for (const [route, n] of counts) this.inc({ route }, n);
        },
      });
    counter(
      'catalog_read_cache_builds_total',
      'Answers built by running the route (misses that found no build of the same answer running)',
      service.counts.builds,
    );
    counter(
      'catalog_read_cache_joined_total',
      'Misses that waited for a build of the same answer already running instead of building it again',
      service.counts.joined,
    );
  }
}
