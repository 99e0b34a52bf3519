import { Module } from '@nestjs/common';
import { CatalogVersionModule } from '../catalog-version/catalog-version.module';
import { DcatModule } from '../dcat/dcat.module';
import { ReadCacheModule } from '../read-cache/read-cache.module';
import { FdpController } from './fdp.controller';
import { FdpIndexClient } from './fdp-index.client';
import { FdpIndexScheduler } from './fdp-index.scheduler';
import { FdpService } from './fdp.service';

/** The catalog as a FAIR Data Point (docs/fdp.md). */
@Module({
  imports: [DcatModule, CatalogVersionModule, ReadCacheModule],
  controllers: [FdpController],
  providers: [FdpService, FdpIndexClient, FdpIndexScheduler],
})
export class FdpModule {}
