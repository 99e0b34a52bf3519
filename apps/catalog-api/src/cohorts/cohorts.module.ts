import { Module } from '@nestjs/common';
import { CatalogVersionModule } from '../catalog-version/catalog-version.module';
import { CohortsController } from './cohorts.controller';
import { CohortsService } from './cohorts.service';

@Module({
  imports: [CatalogVersionModule],
  controllers: [CohortsController],
  providers: [CohortsService],
  exports: [CohortsService],
})
export class CohortsModule {}
