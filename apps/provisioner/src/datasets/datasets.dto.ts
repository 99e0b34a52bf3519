import { IsDefined, IsOptional } from 'class-validator';
import { IsSafeSegment } from '../sources/is-safe-segment.decorator';

export class ImportDatasetBody {
  @IsDefined()
  @IsSafeSegment()
  dataset_id!: string;
}

export class DatasetsQuery {
  @IsOptional()
  @IsSafeSegment()
  submission?: string;
}
