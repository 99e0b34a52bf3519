import { Controller, Get, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { Public } from '@app/auth';
import { CachedJsonResponder } from '../common/cached-json.responder';
import { CohortsService } from './cohorts.service';

@Controller('api/cohorts')
export class CohortsController {
  constructor(
    private readonly cohorts: CohortsService,
    private readonly responder: CachedJsonResponder,
  ) {}

  /** Public: everyone sees the same published cohorts, so keys are not even read. */
  @Get()
  @Public()
  async list(@Req() req: Request, @Res() res: Response): Promise<void> {
    await this.responder.respond(
      req,
      res,
      { route: 'cohorts', identity: 'public', params: {} },
      (manager) => this.cohorts.listPublished(manager),
    );
  }
}
