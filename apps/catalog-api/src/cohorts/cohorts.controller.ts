import { Controller, Get, Query } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { ApiTags } from '@nestjs/swagger';
import { Public } from '@app/auth';
import { ApiCachedRead } from '../common/api-docs';
import { exactValues } from '../common/query-input';
import { CachedRead, ReadSnapshot } from '../read-cache/cached-read.decorator';
import { CohortsPage, CohortsQuery } from './cohorts.dto';
import { COHORT_FILTERS } from './cohorts.repository';
import { CohortsService } from './cohorts.service';

@ApiTags('catalog')
@Controller('api/cohorts')
export class CohortsController {
  constructor(private readonly cohorts: CohortsService) {}

  /** Public: everyone sees the same published cohorts, so keys are not even read. */
  @ApiCachedRead({ summary: 'Published cohorts, by name', caller: 'public' }, CohortsPage)
  @Get()
  @Public()
  @CachedRead()
  list(@Query() given: CohortsQuery, @ReadSnapshot() manager: EntityManager) {
    return this.cohorts.listPublished(manager, exactValues(given, COHORT_FILTERS));
  }
}
