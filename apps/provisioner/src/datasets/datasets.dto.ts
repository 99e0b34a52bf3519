import { IsDefined, IsOptional } from 'class-validator';
import { ListPageQuery } from '../common/list-page.dto';
import { IsSafeSegment } from '../sources/is-safe-segment.decorator';

export class ImportDatasetBody {
  @IsDefined()
  @IsSafeSegment({ required: true })
  dataset_id!: string;
}

export class DatasetsQuery extends ListPageQuery {
  @IsOptional()
  @IsSafeSegment({ required: false, description: 'Only datasets of this submission ref' })
  submission?: string;
}
