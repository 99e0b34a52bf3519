import { Module } from '@nestjs/common';
import { CatalogVersionModule } from '../catalog-version/catalog-version.module';
import { PartnersController } from './partners.controller';
import { PartnersService } from './partners.service';

@Module({
  imports: [CatalogVersionModule],
  controllers: [PartnersController],
  providers: [PartnersService],
  exports: [PartnersService],
})
export class PartnersModule {}
