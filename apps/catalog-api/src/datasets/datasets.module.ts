import { Module } from '@nestjs/common';
import { CatalogVersionModule } from '../catalog-version/catalog-version.module';
import { DatasetGraphLoader } from './dataset-graph.loader';
import { DatasetsController } from './datasets.controller';
import { DatasetsService } from './datasets.service';

@Module({
  imports: [CatalogVersionModule],
  controllers: [DatasetsController],
  providers: [DatasetGraphLoader, DatasetsService],
  exports: [DatasetGraphLoader, DatasetsService],
})
export class DatasetsModule {}
