import { ListPageQuery } from '../common/list-page.dto';
import { IsSafeSegment } from '../sources/is-safe-segment.decorator';

export class ImportDatasetBody {
  @IsSafeSegment({ required: true })
  dataset_id!: string;
}

export class DatasetsQuery extends ListPageQuery {
  @IsSafeSegment({ required: false, description: 'Only datasets of this submission ref' })
  submission?: string;
}
