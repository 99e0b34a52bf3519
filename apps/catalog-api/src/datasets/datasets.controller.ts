import { Controller, Get, Query } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, Principal } from '@app/auth';
import { ApiCachedRead } from '../common/api-docs';
import { exactValues } from '../common/query-input';
import { viewerOf } from '../auth/viewer';
import { CachedRead, ReadSnapshot } from '../read-cache/cached-read.decorator';
import { DATASET_FILTERS, DatasetFilter } from './datasets.repository';
import { DatasetsExport, DatasetsQuery } from './datasets.dto';
import { DatasetsService } from './datasets.service';

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
    DatasetsExport,
  )
  @Get()
  @CachedRead()
  list(
    @Query() given: DatasetsQuery,
    @CurrentPrincipal() principal: Principal | undefined,
    @ReadSnapshot() manager: EntityManager,
  ) {
    const viewer = viewerOf(principal);
    const filter: DatasetFilter = {
      projectId: given.project_id,
      projectTitle: given.project_title,
      exact: exactValues(given, DATASET_FILTERS),
    };
    return this.datasets.list(manager, viewer, filter);
  }
}
