import { ProjectIdParam } from '../common/query-input';

export class ContractsQuery {
  @ProjectIdParam()
  project_id?: number;
}
