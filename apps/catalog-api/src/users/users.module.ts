import { Module } from '@nestjs/common';
import { CatalogVersionModule } from '../catalog-version/catalog-version.module';
import { UsersController } from './users.controller';

@Module({
  imports: [CatalogVersionModule],
  controllers: [UsersController],
})
export class UsersModule {}
