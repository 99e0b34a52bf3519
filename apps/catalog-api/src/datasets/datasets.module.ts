import { Module } from '@nestjs/common';
import { ReadCacheModule } from '../read-cache/read-cache.module';
import { DatasetExportsRefresher } from './dataset-exports-refresher';
import { DatasetsController } from './datasets.controller';
import { DatasetsService } from './datasets.service';

@Module({
  imports: [ReadCacheModule],
  controllers: [DatasetsController],
  providers: [DatasetsService, DatasetExportsRefresher],
  exports: [DatasetsService, DatasetExportsRefresher],
})
export class DatasetsModule {}
