import { Module } from '@nestjs/common';
import { DcatController } from './dcat.controller';
import { DcatRepository } from './dcat.repository';
import { DcatService } from './dcat.service';

/** The catalog as DCAT-AP 3.0.1 with the HealthDCAT-AP profile (docs/dcat.md). */
@Module({
  controllers: [DcatController],
  providers: [DcatService, DcatRepository],
  exports: [DcatService, DcatRepository],
})
export class DcatModule {}
