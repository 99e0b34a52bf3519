import { Inject, Injectable } from '@nestjs/common';
import { Gauge, Registry } from 'prom-client';
import { METRICS_REGISTRY } from '@app/platform';
import { CachedJsonResponder } from './cached-json.responder';
import { FastReads } from './fast-reads';

/**
 * What each response cache holds, read at scrape time: entries and counted bytes next to
 * their limits (RESPONSE_CACHE_MAX_ENTRIES, RESPONSE_CACHE_MAX_BYTES) show an operator whether
 * the caches are full and how much of the replica's memory they take.
 */
@Injectable()
export class ResponseCacheMetrics {
  constructor(
    @Inject(METRICS_REGISTRY) registry: Registry,
    responder: CachedJsonResponder,
    fastReads: FastReads,
  ) {
    const caches = { responses: responder, 'fast-reads': fastReads };
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
  }
}
