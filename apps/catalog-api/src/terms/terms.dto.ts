import { PositiveIntParam, TextParam } from '@app/platform';
import { Int, ListOf, One, Pagination, Text } from '../common/response-properties';

const MAX_SEARCH_LENGTH = 200;

export class TermSearchQuery {
  @TextParam('Text to find in the labels', MAX_SEARCH_LENGTH, true)
  search!: string;

  @PositiveIntParam('From 1', true)
  page!: number;
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
