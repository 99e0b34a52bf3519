import { Module } from '@nestjs/common';
import { CachedJsonResponder } from '../common/cached-json.responder';
import { FastReads } from '../common/fast-reads';
import { ResponseCacheMetrics } from '../common/response-cache.metrics';
import { CatalogVersionService } from './catalog-version.service';
import { CatalogVersionTracker } from './catalog-version.tracker';

/** The data version and the response caches that depend on it; one instance per process. */
@Module({
  providers: [
    CatalogVersionService,
    CatalogVersionTracker,
    CachedJsonResponder,
    FastReads,
    ResponseCacheMetrics,
  ],
  exports: [CatalogVersionService, CatalogVersionTracker, CachedJsonResponder, FastReads],
})
export class CatalogVersionModule {}
