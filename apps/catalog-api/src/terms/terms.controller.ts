import { Controller, Get, Param, Query } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { ApiParam, ApiTags } from '@nestjs/swagger';
import { Public } from '@app/auth';
import { ApiCall } from '../common/api-docs';
import { CachedRead, ReadSnapshot } from '../read-cache/cached-read.decorator';
import { TERM_CATEGORIES, type TermCategory } from './term-category';
import { TermCategoryPipe } from './term-category.pipe';
import { TermSearchPage, TermSearchQuery } from './terms.dto';
import { TermSearchService } from './term-search.service';
import { TERM_PAGE_SIZE } from './terms.repository';

/** The autocomplete behind the project form's term pickers (Select2 paging format). */
@ApiTags('terms')
@Controller('api/termsearch')
export class TermsController {
  constructor(private readonly termSearch: TermSearchService) {}

  @ApiCall({
    summary: 'Search a vocabulary by label',
    caller: 'public',
    description:
      `Case-insensitive substring match; exact matches first, then prefixes, then the rest, by ` +
      `label; ${TERM_PAGE_SIZE} a page. A page past the last is a 400; page 1 of nothing is ` +
      'an empty list.',
    responses: [
      {
        status: 200,
        description: 'One page of terms (Select2 paging format)',
        body: TermSearchPage,
      },
    ],
    errors: [404],
  })
  @ApiParam({
    name: 'category',
    description: 'The vocabulary; any other is a 404',
    enum: [...TERM_CATEGORIES],
  })
  @Public()
  @Get(':category')
  // Terms are versioned data: a repeated search is answered from the caches until a load.
  @CachedRead({ singleStatement: true })
  search(
    @Param('category', TermCategoryPipe) category: TermCategory,
    @Query() { search, page }: TermSearchQuery,
    @ReadSnapshot() manager: EntityManager,
  ) {
    return this.termSearch.search(manager, category, search, page);
  }
}
