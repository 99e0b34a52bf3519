import { formatTimestamp, textOrNull } from '../common/formatting';
import type { PersonExport } from '../contacts/contact.exporter';
import type {
  AccessCategory,
  ConsentStatus,
  DeIdentificationMethod,
  SubjectsCategory,
} from './data-declaration.entity';
import { USE_CLASS_LABELS, type UseClass, type UseConditionRule } from './use-condition-codes';

export const DATASET_SCHEMA_URL =
  'https://raw.githubusercontent.com/elixir-luxembourg/json-schemas/v0.0.6/schemas/elu-dataset.json';

/** Rows as the dataset graph loader reads them (snake_case, dates already as text). */
export interface DatasetRow {
  id: number;
  elu_accession: string | null;
  title: string;
  description: string | null;
  elu_uuid: string;
  other_external_id: string | null;
  project_acronym: string | null;
  project_accession: string | null;
  metadata: string;
}

export interface DeclarationRow {
  id: number;
  dataset_id: number;
  title: string;
  data_types: string[];
  data_types_notes: string | null;
  access_category: AccessCategory | null;
  access_procedure: string | null;
  subjects_category: SubjectsCategory;
  de_identification: DeIdentificationMethod;
  consent_status: ConsentStatus | null;
  has_special_subjects: boolean | null;
  special_subjects_description: string | null;
  embargo_date: string | null;
  storage_end_date: string | null;
  storage_duration_criteria: string | null;
}

export interface DeclarationCohortRow {
  data_declaration_id: number;
  name: string;
  elu_accession: string | null;
}

export interface UseConditionRow {
  data_declaration_id: number;
  use_class: UseClass;
  use_class_note: string | null;
  use_condition_note: string | null;
  use_condition_rule: UseConditionRule;
}

export interface LegalBasisRow {
  dataset_id: number;
  legal_basis_codes: string[];
  personal_data_codes: string[];
  legal_basis_notes: string | null;
  declaration_titles: string[];
}

export interface StorageRow {
  dataset_id: number;
  platform: string;
  location: string | null;
  accesses: string[];
}

export interface TransferRow {
  dataset_id: number;
  partner: string | null;
  transfer_details: string | null;
  transfer_date: string | null;
}

export interface ExposureRow {
  dataset_id: number;
  form_id: number;
  deprecated_at: Date | null;
  created_at: Date;
  deprecation_reason: string | null;
  request_pdf_enabled: boolean;
}

/** Everything one dataset export needs, already grouped. */
export interface DatasetGraph {
  dataset: DatasetRow;
  declarations: {
    declaration: DeclarationRow;
    cohorts: DeclarationCohortRow[];
    useConditions: UseConditionRow[];
  }[];
  legalBases: LegalBasisRow[];
  storages: StorageRow[];
  transfers: TransferRow[];
  contacts: PersonExport[];
  /** The viewing endpoint's exposure (active, else latest deprecated); undefined for other viewers. */
  exposure?: ExposureRow;
}

function toDeclarationExport(entry: DatasetGraph['declarations'][number]) {
  const d = entry.declaration;
  return {
    title: d.title,
    cohorts: entry.cohorts.map((c) => ({ cohort: c.name, cohort_external_id: c.elu_accession })),
    data_types: [...d.data_types].sort(),
    data_types_notes: textOrNull(d.data_types_notes),
    access_category: d.access_category,
    access_procedure: textOrNull(d.access_procedure),
    subjects_category: d.subjects_category,
    de_identification: d.de_identification,
    consent_status: d.consent_status,
    has_special_subjects: d.has_special_subjects,
    special_subjects_description: d.special_subjects_description,
    embargo_date: d.embargo_date,
    storage_end_date: d.storage_end_date,
    storage_duration_criteria: textOrNull(d.storage_duration_criteria),
    use_conditions: entry.useConditions.map((u) => ({
      use_class: u.use_class,
      use_class_label: USE_CLASS_LABELS[u.use_class],
      use_class_note: textOrNull(u.use_class_note),
      use_condition_note: textOrNull(u.use_condition_note),
      use_condition_rule: u.use_condition_rule,
    })),
  };
}

function toExposureFields(exposure: ExposureRow) {
  return {
    form_id: exposure.form_id,
    deprecated: exposure.deprecated_at !== null,
    deprecation_date: formatTimestamp(exposure.deprecated_at),
    released_date: formatTimestamp(exposure.created_at),
    deprecation_notes: textOrNull(exposure.deprecation_reason),
    request_pdf_enabled: exposure.request_pdf_enabled,
  };
}

export type DatasetExport = ReturnType<typeof toDatasetExport>;

/** Maps a loaded dataset graph to the export shape of the contract (§3). */
export function toDatasetExport(graph: DatasetGraph, source: string) {
  const d = graph.dataset;
  return {
    source,
    id_at_source: String(d.id),
    external_id: d.elu_accession,
    name: d.title,
    description: textOrNull(d.description),
    elu_uuid: d.elu_uuid,
    other_external_id: textOrNull(d.other_external_id),
    project: d.project_acronym,
    project_external_id: d.project_accession,
    data_declarations: graph.declarations.map(toDeclarationExport),
    legal_bases: graph.legalBases.map((l) => ({
      legal_basis_codes: l.legal_basis_codes,
      personal_data_codes: l.personal_data_codes,
      legal_basis_notes: textOrNull(l.legal_basis_notes),
      data_declarations: l.declaration_titles,
    })),
    storages: graph.storages.map((s) => ({
      platform: s.platform,
      location: textOrNull(s.location),
      accesses: s.accesses,
    })),
    transfers: graph.transfers.map((t) => ({
      partner: t.partner,
      transfer_details: textOrNull(t.transfer_details),
      transfer_date: t.transfer_date,
    })),
    contacts: graph.contacts,
    metadata: d.metadata,
    ...(graph.exposure === undefined ? {} : toExposureFields(graph.exposure)),
  };
}
