import { ExactFiltersQuery, FieldsParam, ProjectIdParam } from '../common/query-input';
import { PROJECT_FIELDS, type ProjectField } from './project.exporter';
import { PROJECT_FILTERS } from './projects.repository';

export class ProjectsQuery extends ExactFiltersQuery(PROJECT_FILTERS) {
  @ProjectIdParam()
  project_id?: number;

  @FieldsParam(PROJECT_FIELDS, '`source` is always kept.')
  fields?: ProjectField[];
}
