import { Controller, Get, Param, Query } from '@nestjs/common';
import { ImportRecord } from './import-record';
import { ListImportsQuery } from './imports.dto';
import { ImportPage, ImportsService } from './imports.service';

@Controller('imports')
export class ImportsController {
  constructor(private readonly imports: ImportsService) {}

  @Get()
  list(@Query() query: ListImportsQuery): Promise<ImportPage> {
    return this.imports.list(query);
  }

  @Get(':id')
  get(@Param('id') id: string): Promise<ImportRecord> {
    return this.imports.get(id);
  }
}
