import { Controller, Get, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { ApiTags } from '@nestjs/swagger';
import { Public } from '@app/auth';
import { ApiCachedRead, ApiExactFilterQueries } from '../common/api-docs';
import { COHORT_SCHEMA, resultsBody } from '../common/api-schemas';
import { CachedJsonResponder } from '../common/cached-json.responder';
import { RawQuery, readExactFilters } from '../common/query-params';
import { COHORT_FILTERS } from './cohorts.repository';
import { CohortsService } from './cohorts.service';

@ApiTags('catalog')
@Controller('api/cohorts')
export class CohortsController {
  constructor(
    private readonly cohorts: CohortsService,
    private readonly responder: CachedJsonResponder,
  ) {}

  /** Public: everyone sees the same published cohorts, so keys are not even read. */
  @ApiCachedRead(
    { summary: 'Published cohorts, by name', caller: 'public' },
    resultsBody(COHORT_SCHEMA),
  )
  @ApiExactFilterQueries(COHORT_FILTERS)
  @Get()
  @Public()
  async list(@Req() req: Request, @Res() res: Response): Promise<void> {
    const exact = readExactFilters(req.query as RawQuery, COHORT_FILTERS);
    await this.responder.respond(
      req,
      res,
      { route: 'cohorts', identity: 'public', params: { exact } },
      (manager) => this.cohorts.listPublished(manager, exact),
    );
  }
}
