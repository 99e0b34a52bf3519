import { Module } from '@nestjs/common';
import { DrsBytesController } from './drs-bytes.controller';
import { DrsController } from './drs.controller';
import { DrsService } from './drs.service';
import { StoredDatasets } from './stored-datasets';

/** GA4GH DRS 1.5 over the stored datasets, and the bytes behind its access URLs. */
@Module({
  controllers: [DrsController, DrsBytesController],
  providers: [DrsService, StoredDatasets],
})
export class DrsModule {}
