import { Controller, Get, Param, Query } from '@nestjs/common';
import { Public } from '@app/auth';
import { NotFoundError, ValidationFailedError } from '@app/errors';
import { readNonEmptyString, readPositiveInt, type RawQuery } from '../common/query-params';
import { isTermCategory } from './term-category';
import { TermSearchService, type TermSearchPage } from './term-search.service';

const MAX_SEARCH_LENGTH = 200;

function required<T>(value: T | undefined, parameter: string): T {
  if (value === undefined) throw new ValidationFailedError([{ parameter, message: 'is required' }]);
  return value;
}

/** The autocomplete behind the project form's term pickers (Select2 paging format). */
@Controller('api/termsearch')
export class TermsController {
  constructor(private readonly termSearch: TermSearchService) {}

  @Public()
  @Get(':category')
  search(@Param('category') category: string, @Query() query: RawQuery): Promise<TermSearchPage> {
    if (!isTermCategory(category)) throw new NotFoundError(`Unknown term category "${category}"`);
    const search = required(readNonEmptyString(query, 'search', MAX_SEARCH_LENGTH), 'search');
    const page = required(readPositiveInt(query, 'page'), 'page');
    return this.termSearch.search(category, search, page);
  }
}
