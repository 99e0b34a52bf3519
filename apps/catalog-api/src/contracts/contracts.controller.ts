import { Controller, Get, Query } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, Principal } from '@app/auth';
import { ApiCachedRead } from '../common/api-docs';
import { viewerOf } from '../auth/viewer';
import { CachedRead, ReadSnapshot } from '../read-cache/cached-read.decorator';
import { ContractsPage, ContractsQuery } from './contracts.dto';
import { ContractsService } from './contracts.service';

@ApiTags('catalog')
@Controller('api/contracts')
export class ContractsController {
  constructor(private readonly contracts: ContractsService) {}

  @ApiCachedRead(
    {
      summary: 'Contracts whose project has an exposed dataset',
      caller: 'any key',
      description: 'A user key sees only those it holds `protected` on (or on their project).',
    },
    ContractsPage,
  )
  @Get()
  @CachedRead()
  list(
    @Query() given: ContractsQuery,
    @CurrentPrincipal() principal: Principal | undefined,
    @ReadSnapshot() manager: EntityManager,
  ) {
    return this.contracts.list(manager, viewerOf(principal), given.project_id);
  }
}
