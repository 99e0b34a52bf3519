import { Controller, Get } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { ApiTags } from '@nestjs/swagger';
import { AllowBearer, RequireKinds } from '@app/auth';
import { ApiCachedRead } from '../common/api-docs';
import { CachedRead, ReadSnapshot } from '../read-cache/cached-read.decorator';
import { UsersPage } from './users.dto';
import { UsersRepository } from './users.repository';

@ApiTags('users')
@Controller('api/users')
export class UsersController {
  constructor(private readonly users: UsersRepository) {}

  /** Active users for pickers; `text` falls back to the username when there is no name. */
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
    const rows = await this.users.listActive(manager);
    return {
      results: rows.map((row) => ({
        id: row.id,
        text: `${row.first_name} ${row.last_name}`.trim() || row.username,
      })),
    };
  }
}
