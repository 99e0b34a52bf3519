import { Controller, Get } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { ApiTags } from '@nestjs/swagger';
import { AllowBearer, RequireKinds } from '@app/auth';
import { ApiCachedRead } from '../common/api-docs';
import { CachedRead, ReadSnapshot } from '../read-cache/cached-read.decorator';
import { UsersPage } from './users.dto';
import { UsersService } from './users.service';

@ApiTags('users')
@Controller('api/users')
export class UsersController {
  constructor(private readonly users: UsersService) {}

  @ApiCachedRead(
    {
      summary: 'Active users for pickers, by first then last name',
      caller: 'global or user key, or an identity-provider bearer token',
      description: 'An endpoint key is a 403; the identity provider unreachable is a 503.',
    },
    UsersPage,
  )
  @Get()
  @RequireKinds('global', 'user', 'bearer')
  @AllowBearer()
  @CachedRead()
  async list(@ReadSnapshot() manager: EntityManager) {
    return { results: await this.users.choices(manager) };
  }
}
