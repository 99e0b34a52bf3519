import { Controller, Get, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { CurrentPrincipal, Principal } from '@app/auth';
import { CachedJsonResponder } from '../common/cached-json.responder';
import { RawQuery, readPositiveInt } from '../common/query-params';
import { viewerIdentity, viewerOf } from '../permissions/viewer';
import { ContractsService } from './contracts.service';

@Controller('api/contracts')
export class ContractsController {
  constructor(
    private readonly contracts: ContractsService,
    private readonly responder: CachedJsonResponder,
  ) {}

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
