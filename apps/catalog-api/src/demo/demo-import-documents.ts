import type { ImportKind } from '../catalog-imports/import-shapes';
import {
  DEMO_COHORTS,
  DEMO_CONTACTS,
  DEMO_DATASETS,
  DEMO_PARTNERS,
  DEMO_PROJECTS,
  DEMO_USERS,
} from './demo-catalog';

/**
 * The demo catalog's records as the catalog import documents an operator loads
 * (`POST /api/partners` ..., `npm run catalog -- import`), in the order their references need.
 * Every item of a document gives the same fields (null where the demo has no value), so the
 * rows of one document are inserted in one statement, in order, and draw their accessions in
 * that order.
 */
export function demoImportDocuments(): { kind: ImportKind; document: { items: unknown[] } }[] {
  return [
    { kind: 'partners', document: { items: DEMO_PARTNERS.map(partner) } },
    { kind: 'cohorts', document: { items: DEMO_COHORTS.map(cohort) } },
    { kind: 'projects', document: { items: DEMO_PROJECTS.map(project) } },
    { kind: 'datasets', document: { items: DEMO_DATASETS.map(dataset) } },
    { kind: 'contracts', document: { items: [contract()] } },
  ];
}

/** A demo user's email: the imports find users (custodians, personnel) by it. */
export const demoUserEmail = (username: string): string => `${username}@lcsb.example.lu`;

function demoContact(key: string) {
  const contact = DEMO_CONTACTS.find((c) => c.key === key);
  if (contact === undefined) throw new Error(`demo data refers to unknown contact "${key}"`);
  return contact;
}

function demoUser(username: string) {
  const user = DEMO_USERS.find((u) => u.username === username);
  if (user === undefined) throw new Error(`demo data refers to unknown user "${username}"`);
  return user;
}

/** The full contact form (cohort owners, contract partners' contacts). */
function fullContact(key: string) {
  const c = demoContact(key);
  return {
    first_name: c.first,
    last_name: c.last,
    email: c.email,
    type: c.type,
    oidc_id: c.oidc ?? null,
    phone: c.phone ?? null,
    partners: c.partners.map((name) => ({ name })),
  };
}

/** The short person form of a contact (project contacts). */
function contactPerson(key: string) {
  const c = demoContact(key);
  return {
    first_name: c.first,
    last_name: c.last,
    email: c.email,
    role: c.type,
    affiliations: c.partners,
  };
}

/**
 * A user in the short person form: the importers make a Principal_Investigator who is a user a
 * local custodian, and a Researcher who is a user company personnel.
 */
function userPerson(username: string, role: 'Principal_Investigator' | 'Researcher') {
  const u = demoUser(username);
  return { first_name: u.first, last_name: u.last, email: demoUserEmail(username), role };
}

function partner(p: (typeof DEMO_PARTNERS)[number]) {
  return {
    name: p.name,
    acronym: p.acronym,
    is_clinical: p.clinical,
    geo_category: p.geo,
    sector_category: p.sector,
    address: p.address,
    country_code: p.country,
  };
}

function cohort(c: (typeof DEMO_COHORTS)[number]) {
  return {
    name: c.name,
    description: c.description,
    url: c.url,
    contacts: c.owners.map(fullContact),
    institutes: c.institutes,
  };
}

function project(p: (typeof DEMO_PROJECTS)[number]) {
  return {
    acronym: p.acronym,
    name: p.title,
    description: p.description,
    has_institutional_ethics_approval: p.erp,
    institutional_ethics_approval_notes: p.erpNotes,
    has_national_ethics_approval: p.cner,
    national_ethics_approval_notes: p.cnerNotes,
    start_date: p.start,
    end_date: p.end,
    metadata: p.metadata,
    contacts: [
      ...p.custodians.map((u) => userPerson(u, 'Principal_Investigator')),
      ...p.personnel.map((u) => userPerson(u, 'Researcher')),
      ...p.contacts.map(contactPerson),
    ],
    publications: p.publications.map((pub) => ({ citation: pub.citation, doi: pub.doi })),
  };
}

function dataset(d: (typeof DEMO_DATASETS)[number]) {
  return {
    name: d.title,
    description: d.description,
    project: d.project,
    contacts: d.custodians.map((u) => userPerson(u, 'Principal_Investigator')),
    data_declarations: d.declarations.map((dd) => ({
      title: dd.title,
      cohorts: dd.cohorts.map((name) => ({ cohort: name })),
      data_types: dd.dataTypes,
      access_category: dd.access,
      subjects_category: dd.subjects,
      consent_status: dd.consent,
      has_special_subjects: false,
      storage_end_date: dd.storageEnd,
      storage_duration_criteria: 'The custodian reviews retention at the storage end date.',
      use_conditions: dd.conditions.map((c) => ({
        use_class: c.useClass,
        use_class_note: c.note,
        use_condition_rule: c.rule,
      })),
    })),
    legal_bases: [
      {
        legal_basis_codes: d.legalBasis.codes,
        personal_data_codes: d.legalBasis.personal,
        legal_basis_notes: d.legalBasis.notes,
        data_declarations: d.declarations.map((dd) => dd.title),
      },
    ],
    storages: d.storages.map((s) => ({ platform: s.platform, location: s.location })),
    transfers:
      d.transfer === undefined
        ? []
        : [
            {
              partner: d.transfer.partner,
              transfer_details: d.transfer.details,
              transfer_date: d.transfer.date,
            },
          ],
  };
}

function contract() {
  return {
    name: 'Data sharing agreement with CHL',
    comments: 'Covers the PD-OMICS samples.',
    project: 'PD-OMICS',
    local_custodians: [userPerson('alice.white', 'Principal_Investigator')],
    partners: [
      { partner: 'CHL', partner_roles: ['controller'], contacts: [fullContact('dupont')] },
      { partner: 'LCSB', partner_roles: ['joint_controller', 'processor'], contacts: [] },
    ],
  };
}
