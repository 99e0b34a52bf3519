import { Module } from '@nestjs/common';
import { CachedJsonResponder } from '../common/cached-json.responder';
import { FastReads } from '../common/fast-reads';
import { ResponseCacheMetrics } from '../common/response-cache.metrics';
import { CatalogVersionTracker } from './catalog-version.tracker';

/** The data version and the response caches that depend on it; one instance per process. */
@Module({
  providers: [CatalogVersionTracker, CachedJsonResponder, FastReads, ResponseCacheMetrics],
  exports: [CatalogVersionTracker, CachedJsonResponder, FastReads],
})
export class CatalogVersionModule {}
