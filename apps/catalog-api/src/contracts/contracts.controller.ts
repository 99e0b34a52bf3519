import { Controller, Get, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, Principal } from '@app/auth';
import { ApiCachedRead, ApiProjectIdQuery } from '../common/api-docs';
import { CONTRACT_SCHEMA, itemsBody } from '../common/api-schemas';
import { CachedJsonResponder } from '../common/cached-json.responder';
import { RawQuery, readPositiveInt } from '../common/query-params';
import { viewerIdentity, viewerOf } from '../permissions/viewer';
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
    itemsBody(CONTRACT_SCHEMA),
  )
  @ApiProjectIdQuery()
  @Get()
  async list(
    @Req() req: Request,
    @Res() res: Response,
    @CurrentPrincipal() principal: Principal | undefined,
  ): Promise<void> {
    const viewer = viewerOf(principal);
    const projectId = readPositiveInt(req.query as RawQuery, 'project_id');
    await this.responder.respond(
      req,
      res,
      { route: 'contracts', identity: viewerIdentity(principal), params: { projectId } },
      (manager) => this.contracts.list(manager, viewer, projectId),
    );
  }
}
