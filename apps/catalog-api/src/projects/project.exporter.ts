import { textOrNull } from '../common/formatting';
import { isExportablePerson, type PersonExport } from '../contacts/contact.exporter';

export const PROJECT_SCHEMA_URL =
  'https://raw.githubusercontent.com/elixir-luxembourg/json-schemas/v0.0.6/schemas/elu-project.json';

export const PROJECT_FIELDS = [
  'source',
  'id_at_source',
  'acronym',
  'external_id',
  'name',
  'description',
  'has_institutional_ethics_approval',
  'has_national_ethics_approval',
  'institutional_ethics_approval_notes',
  'national_ethics_approval_notes',
  'start_date',
  'end_date',
  'contacts',
  'publications',
  'metadata',
] as const;
export type ProjectField = (typeof PROJECT_FIELDS)[number];

export interface ProjectRow {
  id: number;
  elu_accession: string | null;
  acronym: string;
  title: string;
  description: string | null;
  has_institutional_ethics_approval: boolean;
  has_national_ethics_approval: boolean;
  institutional_ethics_approval_notes: string | null;
  national_ethics_approval_notes: string | null;
  start_date: string | null;
  end_date: string | null;
  metadata: string;
}

export interface PublicationRow {
  citation: string;
  doi: string | null;
}

/** `citation` for existing clients, `citation_string` for the schema; `doi` only when known. */
export interface PublicationExport {
  citation: string;
  citation_string: string;
  doi?: string;
}

export interface ProjectRelations {
  contacts: PersonExport[];
  publications: PublicationRow[];
}

export type ProjectExport = Record<ProjectField, unknown>;

export function toPublicationExport(row: PublicationRow): PublicationExport {
  const publication: PublicationExport = { citation: row.citation, citation_string: row.citation };
  if (row.doi !== null && row.doi !== '') publication.doi = row.doi;
  return publication;
}

export function toProjectExport(
  row: ProjectRow,
  relations: ProjectRelations,
  source: string,
): ProjectExport {
  return {
    source,
    id_at_source: String(row.id),
    acronym: row.acronym,
    external_id: row.elu_accession,
    name: row.title,
    description: textOrNull(row.description),
    has_institutional_ethics_approval: row.has_institutional_ethics_approval,
    has_national_ethics_approval: row.has_national_ethics_approval,
    institutional_ethics_approval_notes: textOrNull(row.institutional_ethics_approval_notes),
    national_ethics_approval_notes: textOrNull(row.national_ethics_approval_notes),
    start_date: row.start_date,
    end_date: row.end_date,
    contacts: relations.contacts.filter(isExportablePerson),
    publications: relations.publications.map(toPublicationExport),
    metadata: row.metadata,
  };
}

/** Keeps the requested fields; `source` is always kept, as clients rely on it. */
export function pickProjectFields(project: ProjectExport, fields: readonly ProjectField[]) {
  const picked: Partial<ProjectExport> = { source: project.source };
  for (const field of fields) picked[field] = project[field];
  return picked;
}
