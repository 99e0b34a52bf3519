import { ApiSchema } from '@nestjs/swagger';
import { FieldsParam } from '@app/platform';
import { ExactFiltersQuery, ProjectIdParam } from '../common/query-input';
import {
  Accession,
  Bool,
  DateOrNull,
  IdAtSource,
  ListOf,
  Metadata,
  OneOf,
  Source,
  Text,
  TextOrNull,
} from '../common/response-properties';
import { PersonRecord } from '../contacts/contacts.dto';
import { PROJECT_FIELDS, PROJECT_SCHEMA_URL, type ProjectField } from './project.exporter';
import { PROJECT_FILTERS } from './projects.repository';

export class ProjectsQuery extends ExactFiltersQuery(PROJECT_FILTERS) {
  @ProjectIdParam()
  project_id?: number;

  @FieldsParam(PROJECT_FIELDS, '`source` is always kept.')
  fields?: ProjectField[];
}

class PublicationRecord {
  @Text() citation!: string;
  @Text() citation_string!: string;
  @Text({ required: false, description: 'Only when known' }) doi?: string;
}

@ApiSchema({ description: 'A project (ELU schema elu-project)' })
export class ProjectRecord implements Record<ProjectField, unknown> {
  @Source() source!: string;
  @IdAtSource() id_at_source!: string;
  @Text() acronym!: string;
  @Accession() external_id!: string | null;
  @Text({ description: 'The title' }) name!: string;
  @TextOrNull({ description: 'The lay summary' }) description!: string | null;
  @Bool() has_institutional_ethics_approval!: boolean;
  @Bool() has_national_ethics_approval!: boolean;
  @TextOrNull() institutional_ethics_approval_notes!: string | null;
  @TextOrNull() national_ethics_approval_notes!: string | null;
  @DateOrNull() start_date!: string | null;
  @DateOrNull() end_date!: string | null;
  @ListOf(PersonRecord) contacts!: PersonRecord[];
  @ListOf(PublicationRecord) publications!: PublicationRecord[];
  @Metadata() metadata!: string;
}

/** `{"$schema": url, "items": [...]}`, the ELU export wrapper. */
export class ProjectsExport {
  @OneOf([PROJECT_SCHEMA_URL]) $schema!: string;
  @ListOf(ProjectRecord) items!: ProjectRecord[];
}
