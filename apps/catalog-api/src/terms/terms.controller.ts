import { Controller, Get, Param, Query } from '@nestjs/common';
import { Public } from '@app/auth';
import { NotFoundError, ValidationFailedError } from '@app/errors';
import { isTermCategory } from './term-category';
import { TermSearchService, type TermSearchPage } from './term-search.service';

const MAX_SEARCH_LENGTH = 200;
// A page past this cannot exist (25 × 2^31 terms); refusing it keeps OFFSET within bigint.
const MAX_PAGE = 2_147_483_647;

function requiredParameter(query: Record<string, unknown>, parameter: string): string {
  const value = query[parameter];
  if (value === undefined) throw new ValidationFailedError([{ parameter, message: 'is required' }]);
  if (typeof value !== 'string') {
    throw new ValidationFailedError([
      { parameter, message: 'must be given once, as a plain value' },
    ]);
  }
  return value;
}

function parseSearch(query: Record<string, unknown>): string {
  const search = requiredParameter(query, 'search');
  if (search.length === 0 || search.length > MAX_SEARCH_LENGTH) {
    throw new ValidationFailedError([
      { parameter: 'search', message: `must be 1 to ${MAX_SEARCH_LENGTH} characters long` },
    ]);
  }
  return search;
}

function parsePage(query: Record<string, unknown>): number {
  const page = requiredParameter(query, 'page');
  if (!/^[1-9][0-9]{0,9}$/.test(page) || Number(page) > MAX_PAGE) {
    throw new ValidationFailedError([{ parameter: 'page', message: 'must be a positive integer' }]);
  }
  return Number(page);
}

/** The autocomplete behind the project form's term pickers (Select2 paging format). */
@Controller('api/termsearch')
export class TermsController {
  constructor(private readonly termSearch: TermSearchService) {}

  @Public()
  @Get(':category')
  search(
    @Param('category') category: string,
    @Query() query: Record<string, unknown>,
  ): Promise<TermSearchPage> {
    if (!isTermCategory(category)) throw new NotFoundError(`Unknown term category "${category}"`);
    return this.termSearch.search(category, parseSearch(query), parsePage(query));
  }
}
