import { Module } from '@nestjs/common';
import { CatalogVersionModule } from '../catalog-version/catalog-version.module';
import { PermissionsController } from './permissions.controller';
import { PermissionsService } from './permissions.service';

@Module({
  imports: [CatalogVersionModule],
  controllers: [PermissionsController],
  providers: [PermissionsService],
  exports: [PermissionsService],
})
export class PermissionsModule {}
