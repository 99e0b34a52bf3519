import { CONTACT_TYPES } from '../contacts/contact.entity';
import { GDPR_ROLES } from '../contracts/contract-partner-role.entity';
import {
  ACCESS_CATEGORIES,
  CONSENT_STATUSES,
  DE_IDENTIFICATION_METHODS,
  SUBJECTS_CATEGORIES,
} from '../datasets/data-declaration.entity';
import { LEGAL_BASIS_CODES, PERSONAL_DATA_CODES } from '../datasets/legal-basis.entity';
import { DATA_TYPES } from '../datasets/data-types';
import { STORAGE_CATEGORIES } from '../datasets/storage-location.entity';
import { USE_CLASSES, USE_CONDITION_RULES } from '../datasets/use-condition-codes';
import { GEO_CATEGORIES, SECTOR_CATEGORIES } from '../partners/partner.entity';
import {
  bool,
  date,
  field,
  idOrName,
  integer,
  jsonObjectText,
  list,
  oneOf,
  record,
  Shape,
  text,
} from './shape-validators';

/**
 * The import shapes: the export shapes of §3, plus the variants found in ELU documents
 * (aliases, and fields of the ELU schemas we do not store, which are accepted and ignored).
 */

/** Derived keys of every exported record: ignored on import. */
const DERIVED = ['source', 'id_at_source'] as const;

const optionalText = (max?: number) => field(text({ nullable: true, max }));
const name = (max: number) => field(text({ nonEmpty: true, max }), { required: true });
const externalId = field(text({ nullable: true, nonEmpty: true, max: 20 }));
/**
 * An address with a domain, as the ELU schemas' `format: email` takes it: an address the
 * export could not carry is refused when written (docs/decisions/elu-valid-exports.md).
 */
const email = field(
  text({
    nullable: true,
    max: 254,
    pattern: /^[^\s@]+@[^\s@]+\.[^\s@]+$/,
    patternMessage: 'must be an email address (name@domain.tld)',
  }),
);

/** The short person form of project, dataset and contract exports. */
export const personShape = record(
  {
    first_name: name(150),
    last_name: name(150),
    email,
    role: field(oneOf(CONTACT_TYPES)),
    affiliations: field(list(text({ nullable: true, max: 255 }))),
  },
  { ignored: ['pk'] },
);
export type PersonInput = NonNullable<ReturnType<typeof personShape.parse>>;

/** The full contact form of cohort owners and contract partner contacts. */
export const contactShape = record(
  {
    email,
    oidc_id: field(text({ nullable: true, nonEmpty: true, max: 64 })),
    first_name: name(150),
    last_name: name(150),
    address: optionalText(),
    phone: optionalText(50),
    type: field(oneOf(CONTACT_TYPES), { aliases: ['role'] }),
    partners: field(
      list(
        record({
          acronym: optionalText(255),
          name: field(text({ nonEmpty: true, max: 255 }), { required: true }),
        }),
      ),
    ),
  },
  { ignored: ['pk'] },
);
export type ContactInput = NonNullable<ReturnType<typeof contactShape.parse>>;

export const partnerShape = record(
  {
    external_id: externalId,
    name: name(255),
    acronym: optionalText(255),
    is_clinical: field(bool()),
    geo_category: field(oneOf(GEO_CATEGORIES, { nullable: true })),
    sector_category: field(oneOf(SECTOR_CATEGORIES, { nullable: true })),
    address: optionalText(),
    country_code: field(
      text({
        nullable: true,
        pattern: /^[A-Z]{2}$/,
        patternMessage: 'must be an ISO 3166-1 alpha-2 code such as LU',
      }),
    ),
    metadata: field(jsonObjectText()),
  },
  { ignored: DERIVED },
);
export type PartnerInput = NonNullable<ReturnType<typeof partnerShape.parse>>;

export const cohortShape = record(
  {
    external_id: externalId,
    name: name(255),
    description: optionalText(),
    url: optionalText(),
    contacts: field(list(contactShape)),
    institutes: field(list(idOrName())),
    has_ethics_approval: field(bool()),
    ethics_approval_notes: optionalText(),
    metadata: field(jsonObjectText()),
  },
  { ignored: DERIVED },
);
export type CohortInput = NonNullable<ReturnType<typeof cohortShape.parse>>;

const publicationShape = record({
  citation: field(text({ nullable: true, nonEmpty: true })),
  citation_string: field(text({ nullable: true, nonEmpty: true })),
  doi: optionalText(255),
});

export const projectShape = record(
  {
    external_id: externalId,
    acronym: name(200),
    name: name(500),
    description: optionalText(),
    has_institutional_ethics_approval: field(bool()),
    has_national_ethics_approval: field(bool()),
    institutional_ethics_approval_notes: optionalText(),
    national_ethics_approval_notes: optionalText(),
    start_date: field(date()),
    end_date: field(date()),
    contacts: field(list(personShape)),
    publications: field(list(publicationShape)),
    metadata: field(jsonObjectText()),
  },
  { ignored: DERIVED },
);
export type ProjectInput = NonNullable<ReturnType<typeof projectShape.parse>>;

const useConditionShape = record(
  {
    use_class: field(oneOf(USE_CLASSES), { required: true }),
    use_class_note: optionalText(),
    use_condition_note: field(text({ nullable: true }), { aliases: ['use_restriction_note'] }),
    use_condition_rule: field(oneOf(USE_CONDITION_RULES), { aliases: ['use_restriction_rule'] }),
  },
  // use_class_label and duo_iri are derived from use_class; the restriction objects are not stored.
  { ignored: ['use_class_label', 'duo_iri', 'use_restriction_objects'] },
);

const declarationShape = record(
  {
    title: name(255),
    cohorts: field(
      list(
        record({
          cohort: field(text({ nullable: true, nonEmpty: true, max: 255 })),
          cohort_external_id: field(text({ nullable: true, nonEmpty: true, max: 20 })),
        }),
      ),
    ),
    data_types: field(list(oneOf(DATA_TYPES))),
    data_types_notes: field(text({ nullable: true }), { aliases: ['data_type_notes'] }),
    access_category: field(oneOf(ACCESS_CATEGORIES, { nullable: true })),
    access_procedure: optionalText(),
    subjects_category: field(oneOf(SUBJECTS_CATEGORIES)),
    de_identification: field(oneOf(DE_IDENTIFICATION_METHODS)),
    consent_status: field(oneOf([...CONSENT_STATUSES, 'unknown'] as const, { nullable: true })),
    has_special_subjects: field(bool({ nullable: true })),
    special_subjects_description: optionalText(),
    embargo_date: field(date()),
    storage_end_date: field(date()),
    storage_duration_criteria: optionalText(),
    use_conditions: field(list(useConditionShape), { aliases: ['use_restrictions'] }),
  },
  // ELU dataset documents carry these; the catalog does not store them.
  {
    ignored: [
      'source',
      'source_notes',
      'source_collaboration',
      'ombudsman',
      'consent_status_description',
    ],
  },
);
export type DeclarationInput = NonNullable<ReturnType<typeof declarationShape.parse>>;

const legalBasisShape = record({
  legal_basis_codes: field(list(oneOf(LEGAL_BASIS_CODES)), { required: true }),
  personal_data_codes: field(list(oneOf(PERSONAL_DATA_CODES)), { required: true }),
  legal_basis_notes: optionalText(),
  data_declarations: field(list(text({ nonEmpty: true, max: 255 }))),
});

/**
 * A copy's DRS URI is the provisioner's to register (POST /api/registrations): an exported
 * document carries it and is imported again without it, and the copy keeps the one it has.
 */
const storageShape = record(
  {
    platform: name(255),
    location: optionalText(),
    category: field(oneOf(STORAGE_CATEGORIES)),
    accesses: field(list(text({ nonEmpty: true }))),
  },
  { ignored: ['drs_uri'] },
);

const transferShape = record({
  partner: field(text({ nullable: true, nonEmpty: true, max: 255 })),
  transfer_details: optionalText(),
  transfer_date: field(date()),
});

/** Exposure fields belong to one endpoint's view of a dataset: never imported. */
const EXPOSURE_FIELDS = [
  'form_id',
  'deprecated',
  'deprecation_date',
  'released_date',
  'deprecation_notes',
  'request_pdf_enabled',
] as const;

export const datasetShape = record(
  {
    external_id: externalId,
    name: name(255),
    description: optionalText(),
    elu_uuid: field(
      text({
        nullable: true,
        pattern: /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i,
        patternMessage: 'must be a UUID',
      }),
    ),
    other_external_id: optionalText(255),
    project: field(text({ nullable: true, nonEmpty: true, max: 200 })),
    project_external_id: field(text({ nullable: true, nonEmpty: true, max: 20 })),
    data_declarations: field(list(declarationShape)),
    legal_bases: field(list(legalBasisShape)),
    storages: field(list(storageShape)),
    transfers: field(list(transferShape)),
    contacts: field(list(personShape)),
    metadata: field(jsonObjectText()),
  },
  { ignored: [...DERIVED, ...EXPOSURE_FIELDS] },
);
export type DatasetInput = NonNullable<ReturnType<typeof datasetShape.parse>>;

const contractPartnerShape = record({
  partner: name(255),
  partner_roles: field(list(oneOf(GDPR_ROLES))),
  comments: optionalText(),
  contacts: field(list(contactShape)),
});
export type ContractPartnerInput = NonNullable<ReturnType<typeof contractPartnerShape.parse>>;

export const contractShape = record(
  {
    name: name(255),
    comments: optionalText(),
    /** This catalog's project id, as exported. */
    project_id: field(integer()),
    /** Or the project's acronym or accession (portable between catalogs). */
    project: field(text({ nonEmpty: true, max: 200 })),
    local_custodians: field(list(personShape)),
    partners: field(list(contractPartnerShape)),
  },
  { ignored: ['id', 'source'] },
);
export type ContractInput = NonNullable<ReturnType<typeof contractShape.parse>>;

export const IMPORT_KINDS = ['partners', 'cohorts', 'projects', 'datasets', 'contracts'] as const;
export type ImportKind = (typeof IMPORT_KINDS)[number];

export const ITEM_SHAPES: { [K in ImportKind]: Shape<unknown> } = {
  partners: partnerShape,
  cohorts: cohortShape,
  projects: projectShape,
  datasets: datasetShape,
  contracts: contractShape,
};
