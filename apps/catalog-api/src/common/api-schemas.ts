import type { SchemaObject } from '@nestjs/swagger';
import { CONTACT_TYPES } from '../contacts/contact.entity';
import { GDPR_ROLES } from '../contracts/contract-partner-role.entity';
import {
  ACCESS_CATEGORIES,
  CONSENT_STATUSES,
  DE_IDENTIFICATION_METHODS,
  SUBJECTS_CATEGORIES,
} from '../datasets/data-declaration.entity';
import { DATASET_SCHEMA_URL } from '../datasets/dataset.exporter';
import { LEGAL_BASIS_CODES, PERSONAL_DATA_CODES } from '../datasets/legal-basis.entity';
import { USE_CONDITION_RULES } from '../datasets/use-condition-codes';
import { GEO_CATEGORIES, SECTOR_CATEGORIES } from '../partners/partner.entity';
import { PROJECT_SCHEMA_URL, type ProjectField } from '../projects/project.exporter';

/*
 * Response and body schemas of the contract (spec/catalog-api.md §3-§5), built from the same
 * enum constants the exporters and importers use, so the document cannot drift from them.
 */

type Properties = Record<string, SchemaObject>;

const text: SchemaObject = { type: 'string' };
const textOrNull: SchemaObject = { type: 'string', nullable: true };
const dateOrNull: SchemaObject = { type: 'string', format: 'date', nullable: true };
const timestampOrNull: SchemaObject = { type: 'string', format: 'date-time', nullable: true };
const int: SchemaObject = { type: 'integer' };
const bool: SchemaObject = { type: 'boolean' };
const count: SchemaObject = { type: 'integer', minimum: 0 };
const texts: SchemaObject = { type: 'array', items: text };

export const POSITIVE_INT: SchemaObject = { type: 'integer', minimum: 1, maximum: 2_147_483_647 };

const oneOf = (values: readonly string[], nullable = false): SchemaObject => ({
  type: 'string',
  enum: nullable ? [...values, null] : [...values],
  nullable,
});

const listOf = (items: SchemaObject): SchemaObject => ({ type: 'array', items });

/** An object whose keys are always all present (§3: null when empty). */
const record = (properties: Properties, description?: string): SchemaObject => ({
  type: 'object',
  required: Object.keys(properties),
  properties,
  ...(description === undefined ? {} : { description }),
});

const source: SchemaObject = {
  type: 'string',
  format: 'uri',
  description: 'The public base URL of this catalog (CATALOG_SOURCE)',
};
const idAtSource: SchemaObject = { type: 'string', description: 'The database id', example: '12' };
const accession: SchemaObject = {
  type: 'string',
  nullable: true,
  description: 'Accession',
  example: 'ELU_I_131',
};
const metadata: SchemaObject = {
  type: 'string',
  description: 'A JSON-encoded object (default `"{}"`)',
  example: '{}',
};

const person = record(
  {
    first_name: text,
    last_name: text,
    email: textOrNull,
    role: oneOf(CONTACT_TYPES),
    affiliations: { ...texts, description: 'Partner names' },
  },
  'A person in short form',
);

const contact = record(
  {
    pk: text,
    email: textOrNull,
    oidc_id: textOrNull,
    first_name: text,
    last_name: text,
    address: textOrNull,
    phone: textOrNull,
    type: oneOf(CONTACT_TYPES),
    partners: listOf(record({ acronym: textOrNull, name: text })),
  },
  'A contact in full form',
);

const projectProperties: Record<ProjectField, SchemaObject> = {
  source,
  id_at_source: idAtSource,
  acronym: text,
  external_id: accession,
  name: { type: 'string', description: 'The title' },
  description: { type: 'string', nullable: true, description: 'The lay summary' },
  has_institutional_ethics_approval: bool,
  has_national_ethics_approval: bool,
  institutional_ethics_approval_notes: textOrNull,
  national_ethics_approval_notes: textOrNull,
  start_date: dateOrNull,
  end_date: dateOrNull,
  contacts: listOf(person),
  publications: listOf({
    type: 'object',
    required: ['citation', 'citation_string'],
    properties: {
      citation: text,
      citation_string: text,
      doi: { ...text, description: 'Only when known' },
    },
  }),
  metadata,
};
export const PROJECT_SCHEMA = record(projectProperties, 'A project (ELU schema elu-project)');

const declaration = record({
  title: text,
  cohorts: listOf(record({ cohort: text, cohort_external_id: accession })),
  data_types: { ...texts, description: 'Sorted' },
  data_types_notes: textOrNull,
  access_category: oneOf(ACCESS_CATEGORIES, true),
  access_procedure: textOrNull,
  subjects_category: oneOf(SUBJECTS_CATEGORIES),
  de_identification: oneOf(DE_IDENTIFICATION_METHODS),
  consent_status: oneOf(CONSENT_STATUSES, true),
  has_special_subjects: { type: 'boolean', nullable: true },
  special_subjects_description: textOrNull,
  embargo_date: dateOrNull,
  storage_end_date: dateOrNull,
  storage_duration_criteria: textOrNull,
  use_conditions: listOf(
    record({
      use_class: { type: 'string', description: 'GA4GH consent code' },
      use_class_label: text,
      use_class_note: textOrNull,
      use_condition_note: textOrNull,
      use_condition_rule: oneOf(USE_CONDITION_RULES),
    }),
  ),
});

/** Present only for endpoint keys, from that endpoint's exposure. */
const exposureProperties: Properties = {
  form_id: int,
  deprecated: bool,
  deprecation_date: timestampOrNull,
  released_date: timestampOrNull,
  deprecation_notes: textOrNull,
  request_pdf_enabled: bool,
};

const datasetBase = record({
  source,
  id_at_source: idAtSource,
  external_id: accession,
  name: text,
  description: textOrNull,
  elu_uuid: { type: 'string', format: 'uuid' },
  other_external_id: textOrNull,
  project: { type: 'string', nullable: true, description: 'The project acronym' },
  project_external_id: accession,
  data_declarations: listOf(declaration),
  legal_bases: listOf(
    record({
      legal_basis_codes: listOf(oneOf(LEGAL_BASIS_CODES)),
      personal_data_codes: listOf(oneOf(PERSONAL_DATA_CODES)),
      legal_basis_notes: textOrNull,
      data_declarations: { ...texts, description: 'Declaration titles; empty = whole dataset' },
    }),
  ),
  storages: listOf(record({ platform: text, location: textOrNull, accesses: texts })),
  transfers: listOf(
    record({ partner: textOrNull, transfer_details: textOrNull, transfer_date: dateOrNull }),
  ),
  contacts: { ...listOf(person), description: 'Local custodians (role Principal_Investigator)' },
  metadata,
});
export const DATASET_SCHEMA: SchemaObject = {
  ...datasetBase,
  description:
    'A dataset (ELU schema elu-dataset). For endpoint keys also `form_id`, `deprecated`, ' +
    '`deprecation_date`, `released_date`, `deprecation_notes`, `request_pdf_enabled`.',
  properties: { ...datasetBase.properties, ...exposureProperties },
};

export const CONTRACT_SCHEMA = record(
  {
    id: int,
    name: textOrNull,
    comments: textOrNull,
    project_id: int,
    local_custodians: listOf(person),
    partners: listOf(
      record({
        partner: text,
        partner_roles: listOf(oneOf(GDPR_ROLES)),
        comments: textOrNull,
        contacts: listOf(contact),
      }),
    ),
    source,
  },
  'A contract',
);

const partnerProperties: Properties = {
  source,
  id_at_source: idAtSource,
  external_id: accession,
  name: text,
  acronym: textOrNull,
  is_clinical: bool,
  geo_category: oneOf(GEO_CATEGORIES, true),
  sector_category: oneOf(SECTOR_CATEGORIES, true),
  address: textOrNull,
  country_code: { type: 'string', nullable: true, description: 'ISO 3166-1 alpha-2' },
  metadata,
};
// No `required`: with `fields` only the chosen keys are present.
export const PARTNER_SCHEMA: SchemaObject = {
  type: 'object',
  properties: partnerProperties,
  description: 'A partner: every key, or with `fields` only those keys',
};

export const COHORT_SCHEMA = record(
  {
    source,
    id_at_source: idAtSource,
    external_id: accession,
    name: text,
    description: textOrNull,
    url: textOrNull,
    contacts: { ...listOf(contact), description: 'The owners' },
    institutes: { ...listOf(int), description: 'Partner ids' },
    has_ethics_approval: bool,
    ethics_approval_notes: textOrNull,
    metadata,
  },
  'A cohort',
);

/** `{"$schema": url, "items": [...]}`, the ELU export wrapper. */
export const exportWrapper = (schemaUrl: string, item: SchemaObject): SchemaObject => ({
  type: 'object',
  required: ['$schema', 'items'],
  properties: { $schema: { type: 'string', enum: [schemaUrl] }, items: listOf(item) },
});

export const PROJECTS_BODY = exportWrapper(PROJECT_SCHEMA_URL, PROJECT_SCHEMA);
export const DATASETS_BODY = exportWrapper(DATASET_SCHEMA_URL, DATASET_SCHEMA);
export const itemsBody = (item: SchemaObject): SchemaObject => record({ items: listOf(item) });
export const resultsBody = (item: SchemaObject): SchemaObject => record({ results: listOf(item) });

export const PAGINATION = record({
  more: { type: 'boolean', description: 'Another page follows' },
});

/** `{"status": "Success", ...counts}`; every count an integer >= 0. */
export const successCounts = (...counts: string[]): SchemaObject =>
  record({
    status: { type: 'string', enum: ['Success'] },
    ...Object.fromEntries(counts.map((name) => [name, count])),
  });

/**
 * The same shape with nothing required, at any depth: imports accept the export shape but
 * default what is left out (§5), so the export's "every key present" does not apply.
 */
export function asInput(schema: SchemaObject, description?: string): SchemaObject {
  const { required: _required, properties, items, ...rest } = schema;
  const copy: SchemaObject = { ...rest };
  if (description !== undefined) copy.description = description;
  if (properties !== undefined) {
    copy.properties = Object.fromEntries(
      Object.entries(properties).map(([key, value]) => [key, asInput(value as SchemaObject)]),
    );
  }
  if (items !== undefined) copy.items = asInput(items as SchemaObject);
  return copy;
}
