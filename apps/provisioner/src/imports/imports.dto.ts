import { OneOfParam, PositiveIntParam, TextParam } from '@app/platform';
import { IMPORT_STATES, type ImportState } from './import-record';

export const DEFAULT_PER_PAGE = 50;
export const MAX_PER_PAGE = 200;

export class ListImportsQuery {
  @OneOfParam('Only imports in this state', IMPORT_STATES)
  state?: ImportState;

  @TextParam('Only imports from this source', 200)
  source?: string;

  @PositiveIntParam('Page number, from 1; a page past the last is empty', false, { default: 1 })
  page = 1;

  @PositiveIntParam(`Records per page (at most ${MAX_PER_PAGE})`, false, {
    max: MAX_PER_PAGE,
    default: DEFAULT_PER_PAGE,
  })
  per_page = DEFAULT_PER_PAGE;
}
