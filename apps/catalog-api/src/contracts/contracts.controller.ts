import { Controller, Get, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, Principal } from '@app/auth';
import { ApiCachedRead } from '../common/api-docs';
import { CachedJsonResponder } from '../common/cached-json.responder';
import { viewerIdentity, viewerOf } from '../permissions/viewer';
import { ContractsPage, ContractsQuery } from './contracts.dto';
import { ContractsService } from './contracts.service';

@ApiTags('catalog')
@Controller('api/contracts')
export class ContractsController {
  constructor(
    private readonly contracts: ContractsService,
    private readonly responder: CachedJsonResponder,
  ) {}

  @ApiCachedRead(
    {
      summary: 'Contracts whose project has an exposed dataset',
      caller: 'any key',
      description: 'A user key sees only those it holds `protected` on (or on their project).',
    },
    ContractsPage,
  )
  @Get()
  async list(
    @Query() given: ContractsQuery,
    @Req() req: Request,
    @Res() res: Response,
    @CurrentPrincipal() principal: Principal | undefined,
  ): Promise<void> {
    const viewer = viewerOf(principal);
    const projectId = given.project_id;
    await this.responder.respond(
      req,
      res,
      { route: 'contracts', identity: viewerIdentity(principal), params: { projectId } },
      (manager) => this.contracts.list(manager, viewer, projectId),
    );
  }
}
