import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Max, Min } from 'class-validator';
import { parseInteger } from '@app/platform';
import { IMPORT_STATES, type ImportState } from './import-record';

export const DEFAULT_PER_PAGE = 50;
export const MAX_PER_PAGE = 200;

export class ListImportsQuery {
  @ApiPropertyOptional({ enum: IMPORT_STATES })
  @IsOptional()
  @IsIn(IMPORT_STATES)
  state?: ImportState;

  @ApiPropertyOptional({ description: 'Only imports from this source' })
  @IsOptional()
  @IsString()
  source?: string;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    default: 1,
    description: 'Page number, from 1; a page past the last is empty',
  })
  @Transform(({ value }) => parseInteger(value))
  @IsOptional()
  @IsInt()
  @Min(1)
  page = 1;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: MAX_PER_PAGE,
    default: DEFAULT_PER_PAGE,
    description: `Records per page (at most ${MAX_PER_PAGE})`,
  })
  @Transform(({ value }) => parseInteger(value))
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_PER_PAGE)
  per_page = DEFAULT_PER_PAGE;
}
