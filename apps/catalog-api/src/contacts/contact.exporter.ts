import type { ContactType } from './contact.entity';

/** Short person form used in project, dataset and contract exports. */
export interface PersonExport {
  first_name: string;
  last_name: string;
  email: string | null;
  role: ContactType;
  affiliations: string[];
}

/** Full contact form used by cohorts and contract partners. */
export interface ContactExport {
  pk: string;
  email: string | null;
  oidc_id: string | null;
  first_name: string;
  last_name: string;
  address: string | null;
  phone: string | null;
  type: ContactType;
  partners: { acronym: string | null; name: string }[];
}

/** A row of a query that selects `FULL_CONTACT_COLUMNS`: the export's fields, keyed by the id. */
export interface FullContactRow extends Omit<ContactExport, 'pk'> {
  contact_id: number;
}

function emptyToNull(value: string | null): string | null {
  return value === '' ? null : value;
}

export function toContactExport(row: FullContactRow): ContactExport {
  return {
    pk: String(row.contact_id),
    email: emptyToNull(row.email),
    oidc_id: row.oidc_id,
    first_name: row.first_name,
    last_name: row.last_name,
    address: emptyToNull(row.address),
    phone: emptyToNull(row.phone),
    type: row.type,
    partners: row.partners,
  };
}

/** A person row: a user (affiliation = their institution) or a contact (its partners). */
export interface PersonRow {
  first_name: string;
  last_name: string;
  email: string | null;
  affiliations: string[];
}

/** An address with a domain: what the ELU schemas' `format: email` takes. */
export const EXPORTABLE_EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/**
 * Whether the ELU schemas can carry the person: they require an e-mail address and at least
 * one affiliation. The others are left out of a record's `contacts` (what the catalog does not
 * know is left out, never written invalid: docs/decisions/elu-valid-exports.md).
 */
export function isExportablePerson(person: PersonExport): boolean {
  return (
    person.email !== null && EXPORTABLE_EMAIL.test(person.email) && person.affiliations.length > 0
  );
}

export function toPersonExport(row: PersonRow, role: ContactType): PersonExport {
  return {
    first_name: row.first_name,
    last_name: row.last_name,
    email: emptyToNull(row.email),
    role,
    affiliations: row.affiliations,
  };
}
