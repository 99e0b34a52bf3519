import { IsSafeSegment } from '../sources/is-safe-segment.decorator';

export class ImportSubmissionBody {
  @IsSafeSegment({ required: true })
  submission!: string;
}
