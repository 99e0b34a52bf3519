import { Body, Controller, Get, Param, Post, Res } from '@nestjs/common';
import type { Response } from 'express';
import { ImportRecord } from '../imports/import-record';
import { ImportSubmissionBody } from './submissions.dto';
import { ListBody, SubmissionsService, SubmissionView } from './submissions.service';

@Controller('submissions/:srcsys')
export class SubmissionsController {
  constructor(private readonly submissions: SubmissionsService) {}

  @Get()
  list(@Param('srcsys') srcsys: string): Promise<ListBody<SubmissionView>> {
    return this.submissions.list(srcsys);
  }

  @Get('diff')
  diff(@Param('srcsys') srcsys: string): Promise<ListBody<SubmissionView>> {
    return this.submissions.diff(srcsys);
  }

  @Post('import')
  async import(
    @Param('srcsys') srcsys: string,
    @Body() body: ImportSubmissionBody,
    @Res({ passthrough: true }) res: Response,
  ): Promise<ImportRecord> {
    const { status, record } = await this.submissions.import(srcsys, body.submission);
    res.status(status);
    return record;
  }
}
