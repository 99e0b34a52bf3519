import { Module } from '@nestjs/common';
import { CachedJsonResponder } from '../common/cached-json.responder';
import { CatalogVersionService } from './catalog-version.service';

/** The data version and the response cache that depends on it; one instance per process. */
@Module({
  providers: [CatalogVersionService, CachedJsonResponder],
  exports: [CatalogVersionService, CachedJsonResponder],
})
export class CatalogVersionModule {}
