import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, IsOptional, Max, Min } from 'class-validator';
import { parseInteger } from '@app/platform';

/**
 * Items per page of the source listings by default and at most: a drop zone of up to 1,000
 * submissions or datasets answers whole, as it did before the listings were paged; a larger
 * one a page at a time (issue 30, item 5: 80,000 datasets made every listing 17-20 MB).
 */
export const LISTING_PER_PAGE = 1000;

/** `?page=&per_page=` of the source listings (submissions, datasets and their diffs). */
export class ListPageQuery {
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
    maximum: LISTING_PER_PAGE,
    default: LISTING_PER_PAGE,
    description: `Items per page (at most ${LISTING_PER_PAGE}); \`count\` is the number of all`,
  })
  @Transform(({ value }) => parseInteger(value))
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(LISTING_PER_PAGE)
  per_page = LISTING_PER_PAGE;
}

/** One page of a listing and the count of all its items. */
export function pageOf<T>(items: T[], query: ListPageQuery): { items: T[]; count: number } {
  const start = (query.page - 1) * query.per_page;
  return { items: items.slice(start, start + query.per_page), count: items.length };
}
