import { Controller, Get, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { ApiQuery, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, Principal } from '@app/auth';
import { ApiCachedRead, ApiExactFilterQueries, ApiProjectIdQuery } from '../common/api-docs';
import { DATASETS_BODY } from '../common/api-schemas';
import { CachedJsonResponder } from '../common/cached-json.responder';
import {
  RawQuery,
  readExactFilters,
  readNonEmptyString,
  readPositiveInt,
} from '../common/query-params';
import { viewerIdentity, viewerOf } from '../permissions/viewer';
import { DATASET_FILTERS, DatasetFilter } from './datasets.repository';
import { DatasetsService } from './datasets.service';

const PROJECT_TITLE_MAX = 500;

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
    DATASETS_BODY,
  )
  @ApiProjectIdQuery()
  @ApiQuery({
    name: 'project_title',
    required: false,
    description: 'Only the datasets of the project with this exact title (case-insensitive)',
    schema: { type: 'string', minLength: 1, maxLength: PROJECT_TITLE_MAX },
  })
  @ApiExactFilterQueries(DATASET_FILTERS)
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
      projectTitle: readNonEmptyString(raw, 'project_title', PROJECT_TITLE_MAX),
      exact: readExactFilters(raw, DATASET_FILTERS),
    };
    await this.responder.respond(
      req,
      res,
      { route: 'datasets', identity: viewerIdentity(principal), params: { ...filter } },
      (manager) => this.datasets.list(manager, viewer, filter),
    );
  }
}
