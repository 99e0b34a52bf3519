import { IsDefined } from 'class-validator';
import { IsSafeSegment } from '../sources/is-safe-segment.decorator';

export class ImportSubmissionBody {
  @IsDefined()
  @IsSafeSegment({ required: true })
  submission!: string;
}
