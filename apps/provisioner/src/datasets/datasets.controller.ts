import { Body, Controller, Get, Param, Query, Res } from '@nestjs/common';
import { ApiOperation, ApiParam, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { ApiErrorResponses } from '@app/platform';
import { ImportEndpoint, sendImportReply } from '../imports/import-endpoint.decorator';
import { ImportRecord } from '../imports/import-record';
import { pageOf } from '../common/list-page.dto';
import { ListBody } from '../submissions/submissions.service';
import { DatasetsQuery, ImportDatasetBody } from './datasets.dto';
import { DatasetDiffView, DatasetsService, DatasetView } from './datasets.service';

@ApiTags('datasets')
@ApiParam({ name: 'srcsys', description: 'A configured source (SOURCES), e.g. dropzone' })
@Controller('datasets/:srcsys')
export class DatasetsController {
  constructor(private readonly datasets: DatasetsService) {}

  @ApiOperation({ summary: 'Datasets of the source' })
  @ApiResponse({
    status: 200,
    description: '`{items: [dataset], count}`: one page, `count` of all',
  })
  @ApiErrorResponses(404, 503)
  @Get()
  async list(
    @Param('srcsys') srcsys: string,
    @Query() query: DatasetsQuery,
  ): Promise<ListBody<DatasetView>> {
    return pageOf((await this.datasets.list(srcsys, query.submission)).items, query);
  }

  @ApiOperation({
    summary: 'Datasets of eligible submissions not in storage, each with `ready` and `reason`',
  })
  @ApiResponse({
    status: 200,
    description: '`{items: [dataset], count}`: one page, `count` of all',
  })
  @ApiErrorResponses(404, 503)
  @Get('diff')
  async diff(
    @Param('srcsys') srcsys: string,
    @Query() query: DatasetsQuery,
  ): Promise<ListBody<DatasetDiffView>> {
    return pageOf((await this.datasets.diff(srcsys, query.submission)).items, query);
  }

  @ImportEndpoint('Queue the copy of a dataset into data/raw/<dataset_id>/')
  async import(
    @Param('srcsys') srcsys: string,
    @Body() body: ImportDatasetBody,
    @Res({ passthrough: true }) res: Response,
  ): Promise<ImportRecord> {
    return sendImportReply(res, await this.datasets.import(srcsys, body.dataset_id));
  }
}
