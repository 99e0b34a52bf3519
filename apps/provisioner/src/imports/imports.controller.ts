import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiOperation, ApiParam, ApiResponse, ApiTags } from '@nestjs/swagger';
import { ApiErrorResponses } from '@app/platform';
import { ImportRecord } from './import-record';
import { ListImportsQuery } from './imports.dto';
import { ImportPage, ImportsService } from './imports.service';

@ApiTags('imports')
@Controller('imports')
export class ImportsController {
  constructor(private readonly imports: ImportsService) {}

  @ApiOperation({
    summary: 'Import records, newest first, paged',
    description:
      'Newest first by `created_at`, then by id (both descending). Pages are read from the ' +
      'queue store a page at a time: any page costs about the same at 100,000 records. ' +
      '`count` is the number of records matching the filters, on every page.',
  })
  @ApiResponse({
    status: 200,
    description: '`{items: [import record], count, page, per_page}`',
  })
  @ApiErrorResponses(400)
  @Get()
  list(@Query() query: ListImportsQuery): Promise<ImportPage> {
    return this.imports.list(query);
  }

  @ApiOperation({ summary: 'One import record, with progress' })
  @ApiParam({ name: 'id', description: 'Import id: `<source>-<kind>-<key>`' })
  @ApiResponse({ status: 200, description: 'The import record' })
  @ApiErrorResponses(404, 503)
  @Get(':id')
  get(@Param('id') id: string): Promise<ImportRecord> {
    return this.imports.get(id);
  }
}
