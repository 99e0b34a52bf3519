import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { TextParam } from '@app/platform';
import { ExactFiltersQuery, ProjectIdParam } from '../common/query-input';
import {
  Accession,
  Bool,
  DateOrNull,
  Int,
  ListOf,
  Metadata,
  OneOf,
  OneOfOrNull,
  Text,
  TextOrNull,
  Texts,
  DescribedRecord,
} from '../common/response-properties';
import { PersonRecord } from '../contacts/contacts.dto';
import {
  ACCESS_CATEGORIES,
  CONSENT_STATUSES,
  DE_IDENTIFICATION_METHODS,
  SUBJECTS_CATEGORIES,
} from './data-declaration.entity';
import { DATASET_SCHEMA_URL } from './dataset-schema';
import { LEGAL_BASIS_CODES, PERSONAL_DATA_CODES } from './legal-basis.entity';
import { USE_CONDITION_RULES } from './use-condition-codes';
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

class DeclarationCohort {
  @Text() cohort!: string;
  @Accession() cohort_external_id!: string | null;
}

class UseConditionRecord {
  @Text({ description: 'GA4GH consent code' }) use_class!: string;
  @Text() use_class_label!: string;
  @TextOrNull({
    description:
      'The consent code as a Data Use Ontology term (http://purl.obolibrary.org/obo/DUO_…); null for IP and Other, which DUO lacks',
  })
  duo_iri!: string | null;
  @TextOrNull() use_class_note!: string | null;
  @TextOrNull() use_condition_note!: string | null;
  @OneOf(USE_CONDITION_RULES) use_condition_rule!: string;
}

class DeclarationRecord {
  @Text() title!: string;
  @ListOf(DeclarationCohort) cohorts!: DeclarationCohort[];
  @Texts({ description: 'Sorted' }) data_types!: string[];
  @TextOrNull() data_types_notes!: string | null;
  @OneOfOrNull(ACCESS_CATEGORIES) access_category!: string | null;
  @TextOrNull() access_procedure!: string | null;
  @OneOf(SUBJECTS_CATEGORIES) subjects_category!: string;
  @OneOf(DE_IDENTIFICATION_METHODS) de_identification!: string;
  @OneOfOrNull(CONSENT_STATUSES) consent_status!: string | null;
  @Bool({ nullable: true }) has_special_subjects!: boolean | null;
  @TextOrNull() special_subjects_description!: string | null;
  @DateOrNull() embargo_date!: string | null;
  @DateOrNull() storage_end_date!: string | null;
  @TextOrNull() storage_duration_criteria!: string | null;
  @ListOf(UseConditionRecord) use_conditions!: UseConditionRecord[];
}

class LegalBasisRecord {
  @ApiProperty({ type: String, enum: [...LEGAL_BASIS_CODES], isArray: true })
  legal_basis_codes!: string[];
  @ApiProperty({ type: String, enum: [...PERSONAL_DATA_CODES], isArray: true })
  personal_data_codes!: string[];
  @TextOrNull() legal_basis_notes!: string | null;
  @Texts({ description: 'Declaration titles; empty = whole dataset' }) data_declarations!: string[];
}

class StorageRecord {
  @Text() platform!: string;
  @TextOrNull() location!: string | null;
  @Texts() accesses!: string[];
  @Text({
    required: false,
    description:
      'The copy as a GA4GH DRS object (`drs://host/id`), where the provisioner serves it',
  })
  drs_uri?: string;
}

class TransferRecord {
  @TextOrNull() partner!: string | null;
  @TextOrNull() transfer_details!: string | null;
  @DateOrNull() transfer_date!: string | null;
}

/** Present only for endpoint keys, from that endpoint's exposure. */
const ForEndpoints = { required: false } as const;

@ApiSchema({
  description:
    'A dataset (ELU schema elu-dataset). For endpoint keys also `form_id`, `deprecated`, ' +
    '`deprecation_date`, `released_date`, `deprecation_notes`, `request_pdf_enabled`.',
})
export class DatasetRecord extends DescribedRecord {
  @Text({ format: 'uuid' }) elu_uuid!: string;
  @TextOrNull() other_external_id!: string | null;
  @TextOrNull({ description: 'The project acronym' }) project!: string | null;
  @Accession() project_external_id!: string | null;
  @ListOf(DeclarationRecord) data_declarations!: DeclarationRecord[];
  @ListOf(LegalBasisRecord) legal_bases!: LegalBasisRecord[];
  @ListOf(StorageRecord) storages!: StorageRecord[];
  @ListOf(TransferRecord) transfers!: TransferRecord[];
  @ListOf(PersonRecord, { description: 'Local custodians (role Principal_Investigator)' })
  contacts!: PersonRecord[];
  @Metadata() metadata!: string;
  @Int(ForEndpoints) form_id?: number;
  @Bool(ForEndpoints) deprecated?: boolean;
  @Text({ ...ForEndpoints, format: 'date-time', nullable: true }) deprecation_date?: string | null;
  @Text({ ...ForEndpoints, format: 'date-time', nullable: true }) released_date?: string | null;
  @TextOrNull(ForEndpoints) deprecation_notes?: string | null;
  @Bool(ForEndpoints) request_pdf_enabled?: boolean;
}

export class DatasetsExport {
  @OneOf([DATASET_SCHEMA_URL]) $schema!: string;
  @ListOf(DatasetRecord) items!: DatasetRecord[];
}
