import { ExactFiltersQuery, ProjectIdParam, TextParam } from '../common/query-input';
import { DATASET_FILTERS } from './datasets.repository';

const PROJECT_TITLE_MAX = 500;

export class DatasetsQuery extends ExactFiltersQuery(DATASET_FILTERS) {
  @ProjectIdParam()
  project_id?: number;

  @TextParam(
    'Only the datasets of the project with this exact title (case-insensitive)',
    PROJECT_TITLE_MAX,
  )
  project_title?: string;
}
