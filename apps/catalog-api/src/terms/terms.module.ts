import { Module } from '@nestjs/common';
import { ReadCacheModule } from '../read-cache/read-cache.module';
import { TermSearchService } from './term-search.service';
import { TermsController } from './terms.controller';
import { TermsService } from './terms.service';

/** Term vocabularies: search (public) and loading (TermsService, used by admin routes and tools). */
@Module({
  imports: [ReadCacheModule],
  controllers: [TermsController],
  providers: [TermsService, TermSearchService],
  exports: [TermsService],
})
export class TermsModule {}
