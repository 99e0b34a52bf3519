import { Module } from '@nestjs/common';
import { DatasetsController } from './datasets.controller';
import { DatasetsService } from './datasets.service';

/** Routes under /datasets: a source's datasets, the diff with storage, importing one. */
@Module({
  controllers: [DatasetsController],
  providers: [DatasetsService],
})
export class DatasetsModule {}
