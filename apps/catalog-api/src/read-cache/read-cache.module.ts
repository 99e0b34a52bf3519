import { Module } from '@nestjs/common';
import { CatalogVersionModule } from '../catalog-version/catalog-version.module';
import { FastReads } from './fast-reads';
import { ReadCacheInterceptor } from './read-cache.interceptor';
import { ReadCacheMetrics } from './read-cache-metrics';
import { ReadCacheService } from './read-cache.service';

/** The read cache (README.md): one instance per process, used through @CachedRead(). */
@Module({
  imports: [CatalogVersionModule],
  providers: [ReadCacheService, FastReads, ReadCacheInterceptor, ReadCacheMetrics],
  exports: [ReadCacheService, FastReads, ReadCacheInterceptor],
})
export class ReadCacheModule {}
