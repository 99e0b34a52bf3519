import { Body, Controller, Get, Param, Post, Query, Res } from '@nestjs/common';
import type { Response } from 'express';
import { ImportRecord } from '../imports/import-record';
import { ListBody } from '../submissions/submissions.service';
import { DatasetsQuery, ImportDatasetBody } from './datasets.dto';
import { DatasetDiffView, DatasetsService, DatasetView } from './datasets.service';

@Controller('datasets/:srcsys')
export class DatasetsController {
  constructor(private readonly datasets: DatasetsService) {}

  @Get()
  list(
    @Param('srcsys') srcsys: string,
    @Query() query: DatasetsQuery,
  ): Promise<ListBody<DatasetView>> {
    return this.datasets.list(srcsys, query.submission);
  }

  @Get('diff')
  diff(
    @Param('srcsys') srcsys: string,
    @Query() query: DatasetsQuery,
  ): Promise<ListBody<DatasetDiffView>> {
    return this.datasets.diff(srcsys, query.submission);
  }

  @Post('import')
  async import(
    @Param('srcsys') srcsys: string,
    @Body() body: ImportDatasetBody,
    @Res({ passthrough: true }) res: Response,
  ): Promise<ImportRecord> {
    const { status, record } = await this.datasets.import(srcsys, body.dataset_id);
    res.status(status);
    return record;
  }
}
