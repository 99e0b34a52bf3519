import { Body, Controller, Get, Param, Query, Res } from '@nestjs/common';
import { ApiOperation, ApiParam, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { ApiErrorResponses } from '@app/platform';
import { ImportEndpoint, sendImportReply } from '../imports/import-endpoint.decorator';
import { ImportRecord } from '../imports/import-record';
import { ListPageQuery, pageOf } from '../common/list-page.dto';
import { ImportSubmissionBody } from './submissions.dto';
import { ListBody, SubmissionsService, SubmissionView } from './submissions.service';

@ApiTags('submissions')
@ApiParam({ name: 'srcsys', description: 'A configured source (SOURCES), e.g. dropzone' })
@Controller('submissions/:srcsys')
export class SubmissionsController {
  constructor(private readonly submissions: SubmissionsService) {}

  @ApiOperation({ summary: 'Every submission the source lists, eligible or not' })
  @ApiResponse({
    status: 200,
    description: '`{items: [submission], count}`: one page, `count` of all',
  })
  @ApiErrorResponses(404, 503)
  @Get()
  async list(
    @Param('srcsys') srcsys: string,
    @Query() query: ListPageQuery,
  ): Promise<ListBody<SubmissionView>> {
    return pageOf((await this.submissions.list(srcsys)).items, query);
  }

  @ApiOperation({ summary: 'Eligible submissions whose project collection does not exist yet' })
  @ApiResponse({
    status: 200,
    description: '`{items: [submission], count}`: one page, `count` of all',
  })
  @ApiErrorResponses(404, 503)
  @Get('diff')
  async diff(
    @Param('srcsys') srcsys: string,
    @Query() query: ListPageQuery,
  ): Promise<ListBody<SubmissionView>> {
    return pageOf((await this.submissions.diff(srcsys)).items, query);
  }

  @ImportEndpoint("Create a submission's project collection")
  async import(
    @Param('srcsys') srcsys: string,
    @Body() body: ImportSubmissionBody,
    @Res({ passthrough: true }) res: Response,
  ): Promise<ImportRecord> {
    return sendImportReply(res, await this.submissions.import(srcsys, body.submission));
  }
}
