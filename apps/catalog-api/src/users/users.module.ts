import { Module } from '@nestjs/common';
import { ReadCacheModule } from '../read-cache/read-cache.module';
import { UsersController } from './users.controller';
import { UsersService } from './users.service';

@Module({
  imports: [ReadCacheModule],
  controllers: [UsersController],
  providers: [UsersService],
})
export class UsersModule {}
