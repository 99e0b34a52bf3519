import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { Bool, ListOf, Metadata, TextOrNull, DescribedRecord } from '../common/response-properties';
import { ContactRecord } from '../contacts/contacts.dto';
import { ExactFiltersQuery } from '../common/query-input';
import { COHORT_FILTERS } from './cohorts.repository';

export class CohortsQuery extends ExactFiltersQuery(COHORT_FILTERS) {}

@ApiSchema({ description: 'A cohort' })
export class CohortRecord extends DescribedRecord {
  @TextOrNull() url!: string | null;
  @ListOf(ContactRecord, { description: 'The owners' }) contacts!: ContactRecord[];
  @ApiProperty({ type: 'integer', isArray: true, description: 'Partner ids' })
  institutes!: number[];
  @Bool() has_ethics_approval!: boolean;
  @TextOrNull() ethics_approval_notes!: string | null;
  @Metadata() metadata!: string;
}

export class CohortsPage {
  @ListOf(CohortRecord) results!: CohortRecord[];
}
