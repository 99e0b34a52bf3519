import { Controller, Get, Req } from '@nestjs/common';
import type { Request } from 'express';
import type { EntityManager } from 'typeorm';
import { ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, Principal } from '@app/auth';
import { ApiCachedRead, ApiProjectIdQuery } from '../common/api-docs';
import { CONTRACT_SCHEMA, itemsBody } from '../common/api-schemas';
import { RawQuery, readPositiveInt } from '../common/query-params';
import { viewerOf } from '../permissions/viewer';
import { CachedRead, ReadSnapshot } from '../read-cache/cached-read.decorator';
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
    itemsBody(CONTRACT_SCHEMA),
  )
  @ApiProjectIdQuery()
  @Get()
  @CachedRead()
  list(
    @Req() req: Request,
    @CurrentPrincipal() principal: Principal | undefined,
    @ReadSnapshot() manager: EntityManager,
  ) {
    const viewer = viewerOf(principal);
    const projectId = readPositiveInt(req.query as RawQuery, 'project_id');
    return this.contracts.list(manager, viewer, projectId);
  }
}
