import { PositiveIntParam } from '@app/platform';

/**
 * Items per page of the source listings by default and at most: a drop zone of up to 1,000
 * submissions or datasets answers whole, as it did before the listings were paged; a larger
 * one a page at a time (80,000 datasets in one answer weighed 17-20 MB).
 */
export const LISTING_PER_PAGE = 1000;

/** `?page=&per_page=` of the source listings (submissions, datasets and their diffs). */
export class ListPageQuery {
  @PositiveIntParam('Page number, from 1; a page past the last is empty', false, { default: 1 })
  page = 1;

  @PositiveIntParam(
    `Items per page (at most ${LISTING_PER_PAGE}); \`count\` is the number of all`,
    false,
    { max: LISTING_PER_PAGE, default: LISTING_PER_PAGE },
  )
  per_page = LISTING_PER_PAGE;
}

/** One page of a listing and the count of all its items. */
export function pageOf<T>(items: T[], query: ListPageQuery): { items: T[]; count: number } {
  const start = (query.page - 1) * query.per_page;
  return { items: items.slice(start, start + query.per_page), count: items.length };
}
