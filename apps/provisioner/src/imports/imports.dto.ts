import { Transform } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Max, Min } from 'class-validator';
import { parseInteger } from '@app/platform';
import { IMPORT_STATES, type ImportState } from './import-record';

export const DEFAULT_PER_PAGE = 50;
export const MAX_PER_PAGE = 200;

export class ListImportsQuery {
  @IsOptional()
  @IsIn(IMPORT_STATES)
  state?: ImportState;

  @IsOptional()
  @IsString()
  source?: string;

  @Transform(({ value }) => parseInteger(value))
  @IsOptional()
  @IsInt()
  @Min(1)
  page = 1;

  @Transform(({ value }) => parseInteger(value))
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_PER_PAGE)
  per_page = DEFAULT_PER_PAGE;
}
