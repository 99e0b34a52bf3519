import { Controller, Get, Param, Query } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { ApiParam, ApiQuery, ApiTags } from '@nestjs/swagger';
import { Public } from '@app/auth';
import { NotFoundError, ValidationFailedError } from '@app/errors';
import { readNonEmptyString, readPositiveInt, type RawQuery } from '../common/query-params';
import { ApiCall } from '../common/api-docs';
import { PAGINATION, POSITIVE_INT } from '../common/api-schemas';
import { CachedRead, ReadSnapshot } from '../read-cache/cached-read.decorator';
import { isTermCategory, TERM_CATEGORIES } from './term-category';
import { TermSearchService } from './term-search.service';
import { TERM_PAGE_SIZE } from './terms.repository';

const MAX_SEARCH_LENGTH = 200;

function required<T>(value: T | undefined, parameter: string): T {
  if (value === undefined) throw new ValidationFailedError([{ parameter, message: 'is required' }]);
  return value;
}

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
        schema: {
          type: 'object',
          required: ['results', 'pagination'],
          properties: {
            results: {
              type: 'array',
              items: {
                type: 'object',
                required: ['id', 'text', 'term_id'],
                properties: {
                  id: { type: 'integer' },
                  text: { type: 'string', description: 'The label' },
                  term_id: { type: 'string' },
                },
              },
            },
            pagination: PAGINATION,
          },
          example: {
            results: [{ id: 1, text: 'COVID-19', term_id: 'DOID:0080600' }],
            pagination: { more: false },
          },
        },
      },
    ],
    errors: [404],
  })
  @ApiParam({
    name: 'category',
    description: 'The vocabulary; any other is a 404',
    enum: [...TERM_CATEGORIES],
  })
  @ApiQuery({
    name: 'search',
    required: true,
    description: 'Text to find in the labels',
    schema: { type: 'string', minLength: 1, maxLength: MAX_SEARCH_LENGTH },
  })
  @ApiQuery({ name: 'page', required: true, description: 'From 1', schema: POSITIVE_INT })
  @Public()
  @Get(':category')
  // Terms are versioned data: a repeated search is answered from the caches until a load.
  @CachedRead({ singleStatement: true })
  search(
    @Param('category') category: string,
    @Query() query: RawQuery,
    @ReadSnapshot() manager: EntityManager,
  ) {
    if (!isTermCategory(category)) throw new NotFoundError(`Unknown term category "${category}"`);
    const search = required(readNonEmptyString(query, 'search', MAX_SEARCH_LENGTH), 'search');
    const page = required(readPositiveInt(query, 'page'), 'page');
    return this.termSearch.search(manager, category, search, page);
  }
}
