import { Controller, Get, Req } from '@nestjs/common';
import type { Request } from 'express';
import type { EntityManager } from 'typeorm';
import { ApiQuery, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, Principal } from '@app/auth';
import { ApiCachedRead, ApiExactFilterQueries, ApiProjectIdQuery } from '../common/api-docs';
import { DATASETS_BODY } from '../common/api-schemas';
import {
  RawQuery,
  readExactFilters,
  readNonEmptyString,
  readPositiveInt,
} from '../common/query-params';
import { viewerOf } from '../permissions/viewer';
import { CachedRead, ReadSnapshot } from '../read-cache/cached-read.decorator';
import { DATASET_FILTERS, DatasetFilter } from './datasets.repository';
import { DatasetsService } from './datasets.service';

const PROJECT_TITLE_MAX = 500;

@ApiTags('catalog')
@Controller('api/datasets')
export class DatasetsController {
  constructor(private readonly datasets: DatasetsService) {}

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
  @CachedRead()
  list(
    @Req() req: Request,
    @CurrentPrincipal() principal: Principal | undefined,
    @ReadSnapshot() manager: EntityManager,
  ) {
    const viewer = viewerOf(principal);
    const raw = req.query as RawQuery;
    const filter: DatasetFilter = {
      projectId: readPositiveInt(raw, 'project_id'),
      projectTitle: readNonEmptyString(raw, 'project_title', PROJECT_TITLE_MAX),
      exact: readExactFilters(raw, DATASET_FILTERS),
    };
    return this.datasets.list(manager, viewer, filter);
  }
}
