import { Controller, Get, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { ApiTags } from '@nestjs/swagger';
import { Public } from '@app/auth';
import { ApiCachedRead } from '../common/api-docs';
import { CachedJsonResponder } from '../common/cached-json.responder';
import { exactValues } from '../common/query-input';
import { CohortsPage, CohortsQuery } from './cohorts.dto';
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
  @ApiCachedRead({ summary: 'Published cohorts, by name', caller: 'public' }, CohortsPage)
  @Get()
  @Public()
  async list(
    @Query() given: CohortsQuery,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    const exact = exactValues(given, COHORT_FILTERS);
    await this.responder.respond(
      req,
      res,
      { route: 'cohorts', identity: 'public', params: { exact } },
      (manager) => this.cohorts.listPublished(manager, exact),
    );
  }
}
