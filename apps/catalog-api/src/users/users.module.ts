import { Module } from '@nestjs/common';
import { ReadCacheModule } from '../read-cache/read-cache.module';
import { UsersController } from './users.controller';

@Module({
  imports: [ReadCacheModule],
  controllers: [UsersController],
})
export class UsersModule {}
