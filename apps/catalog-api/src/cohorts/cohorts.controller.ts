import { Controller, Get, Req } from '@nestjs/common';
import type { Request } from 'express';
import type { EntityManager } from 'typeorm';
import { ApiTags } from '@nestjs/swagger';
import { Public } from '@app/auth';
import { ApiCachedRead, ApiExactFilterQueries } from '../common/api-docs';
import { COHORT_SCHEMA, resultsBody } from '../common/api-schemas';
import { RawQuery, readExactFilters } from '../common/query-params';
import { CachedRead, ReadSnapshot } from '../read-cache/cached-read.decorator';
import { COHORT_FILTERS } from './cohorts.repository';
import { CohortsService } from './cohorts.service';

@ApiTags('catalog')
@Controller('api/cohorts')
export class CohortsController {
  constructor(private readonly cohorts: CohortsService) {}

  /** Public: everyone sees the same published cohorts, so keys are not even read. */
  @ApiCachedRead(
    { summary: 'Published cohorts, by name', caller: 'public' },
    resultsBody(COHORT_SCHEMA),
  )
  @ApiExactFilterQueries(COHORT_FILTERS)
  @Get()
  @Public()
  @CachedRead()
  list(@Req() req: Request, @ReadSnapshot() manager: EntityManager) {
    const exact = readExactFilters(req.query as RawQuery, COHORT_FILTERS);
    return this.cohorts.listPublished(manager, exact);
  }
}
