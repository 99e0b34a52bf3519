import { PipeTransform } from '@nestjs/common';
import { NotFoundError } from '@app/errors';
import { PositiveIntParam, TextParam } from '@app/platform';
import { Int, ListOf, One, Pagination, Text } from '../common/response-properties';
import { isTermCategory, type TermCategory } from './term-category';

const MAX_SEARCH_LENGTH = 200;

export class TermSearchQuery {
  @TextParam('Text to find in the labels', MAX_SEARCH_LENGTH, true)
  search!: string;

  @PositiveIntParam('From 1', true)
  page!: number;
}

/** An unknown vocabulary is a missing resource (404), not a bad parameter (400). */
export class TermCategoryPipe implements PipeTransform<string, TermCategory> {
  transform(category: string): TermCategory {
    if (!isTermCategory(category)) throw new NotFoundError(`Unknown term category "${category}"`);
    return category;
  }
}

class TermOption {
  @Int({ example: 1 }) id!: number;
  @Text({ description: 'The label', example: 'COVID-19' }) text!: string;
  @Text({ example: 'DOID:0080600' }) term_id!: string;
}

/** One page of terms, in Select2's paging format. */
export class TermSearchPage {
  @ListOf(TermOption) results!: TermOption[];
  @One(Pagination) pagination!: Pagination;
}
