import { Controller, Get, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { CurrentPrincipal, Principal } from '@app/auth';
import { CachedJsonResponder } from '../common/cached-json.responder';
import { RawQuery, readNonEmptyString, readPositiveInt } from '../common/query-params';
import { viewerIdentity, viewerOf } from '../permissions/viewer';
import { DatasetFilter } from './dataset-graph.loader';
import { DatasetsService } from './datasets.service';

@Controller('api/datasets')
export class DatasetsController {
  constructor(
    private readonly datasets: DatasetsService,
    private readonly responder: CachedJsonResponder,
  ) {}

  @Get()
  async list(
    @Req() req: Request,
    @Res() res: Response,
    @CurrentPrincipal() principal: Principal | undefined,
  ): Promise<void> {
    const viewer = viewerOf(principal);
    const raw = req.query as RawQuery;
    const filter: DatasetFilter = {
      projectId: readPositiveInt(raw, 'project_id'),
      projectTitle: readNonEmptyString(raw, 'project_title', 500),
    };
    await this.responder.respond(
      req,
      res,
      { route: 'datasets', identity: viewerIdentity(principal), params: { ...filter } },
      (manager) => this.datasets.list(manager, viewer, filter),
    );
  }
}
