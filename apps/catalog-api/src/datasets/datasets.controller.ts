import { Controller, Get, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, Principal } from '@app/auth';
import { ApiCachedRead } from '../common/api-docs';
import { CachedJsonResponder } from '../common/cached-json.responder';
import { exactValues } from '../common/query-input';
import { viewerIdentity, viewerOf } from '../permissions/viewer';
import { DATASET_FILTERS, DatasetFilter } from './datasets.repository';
import { DatasetsExport, DatasetsQuery } from './datasets.dto';
import { DatasetsService } from './datasets.service';

@ApiTags('catalog')
@Controller('api/datasets')
export class DatasetsController {
  constructor(
    private readonly datasets: DatasetsService,
    private readonly responder: CachedJsonResponder,
  ) {}

  @ApiCachedRead(
    {
      summary: 'Datasets visible to the key',
      caller: 'any key',
      description:
        'Visibility as for projects; endpoint keys also get the fields of their exposure.',
    },
    DatasetsExport,
  )
  @Get()
  async list(
    @Query() given: DatasetsQuery,
    @Req() req: Request,
    @Res() res: Response,
    @CurrentPrincipal() principal: Principal | undefined,
  ): Promise<void> {
    const viewer = viewerOf(principal);
    const filter: DatasetFilter = {
      projectId: given.project_id,
      projectTitle: given.project_title,
      exact: exactValues(given, DATASET_FILTERS),
    };
    await this.responder.respond(
      req,
      res,
      { route: 'datasets', identity: viewerIdentity(principal), params: { ...filter } },
      (manager) => this.datasets.list(manager, viewer, filter),
    );
  }
}
