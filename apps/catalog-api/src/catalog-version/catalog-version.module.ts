import { Module } from '@nestjs/common';
import { CatalogVersionTracker } from './catalog-version-tracker';

/** The data version this replica can vouch for; one instance per process. */
@Module({
  providers: [CatalogVersionTracker],
  exports: [CatalogVersionTracker],
})
export class CatalogVersionModule {}
