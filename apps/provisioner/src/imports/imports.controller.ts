import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiOperation, ApiParam, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import { ApiErrorResponses } from '@app/platform';
import { ImportRecord } from './import-record';
import { ListImportsQuery } from './imports.dto';
import { ImportPage, ImportsService } from './imports.service';

@ApiTags('imports')
@Controller('imports')
export class ImportsController {
  constructor(private readonly imports: ImportsService) {}

  @ApiOperation({ summary: 'Import records, newest first, paged' })
  @ApiQuery({
    name: 'state',
    required: false,
    enum: ['queued', 'running', 'imported', 'failed', 'rejected'],
  })
  @ApiQuery({ name: 'source', required: false, description: 'Only imports from this source' })
  @ApiQuery({ name: 'page', required: false, type: Number, description: 'Page number, from 1' })
  @ApiQuery({ name: 'per_page', required: false, type: Number })
  @ApiResponse({ status: 200, description: '`{items: [import record], count}`' })
  @Get()
  list(@Query() query: ListImportsQuery): Promise<ImportPage> {
    return this.imports.list(query);
  }

  @ApiOperation({ summary: 'One import record, with progress' })
  @ApiParam({ name: 'id', description: 'Import id: `<source>-<kind>-<key>`' })
  @ApiResponse({ status: 200, description: 'The import record' })
  @ApiErrorResponses(404)
  @Get(':id')
  get(@Param('id') id: string): Promise<ImportRecord> {
    return this.imports.get(id);
  }
}
