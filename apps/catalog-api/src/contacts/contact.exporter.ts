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

/*
 * The select-list fragments below stay beside the rows they fill and the mapping that reads
 * them (the projects, datasets, contracts and cohorts repositories select them), so a column
 * and its export field change together.
 */

/** Columns of a `contacts` row aliased `ct`, with its affiliations as JSON (one query). */
export const FULL_CONTACT_COLUMNS = `ct.id AS contact_id, ct.email, ct.oidc_id, ct.first_name,
  ct.last_name, ct.address, ct.phone, ct.type,
  COALESCE((SELECT json_agg(json_build_object('acronym', cpa.acronym, 'name', cpa.name)
      ORDER BY cpa.name)
    FROM contact_partners cp JOIN partners cpa ON cpa.id = cp.partner_id
    WHERE cp.contact_id = ct.id), '[]'::json) AS partners`;

/** Affiliation names of a `contacts` row aliased `ct`, as a text array. */
export const CONTACT_AFFILIATIONS = `ARRAY(SELECT cpa.name::text FROM contact_partners cp
  JOIN partners cpa ON cpa.id = cp.partner_id WHERE cp.contact_id = ct.id ORDER BY cpa.name)`;

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

/** Columns of a `users` row aliased `u` in person form (affiliation joined as `ua`). */
export const USER_PERSON_COLUMNS = `u.first_name, u.last_name, u.email,
  CASE WHEN ua.name IS NULL THEN ARRAY[]::text[] ELSE ARRAY[ua.name::text] END AS affiliations`;

/** SQL: the user `u` (affiliation `ua`) is one `isExportablePerson` takes. */
export const USER_EXPORTABLE = `(u.email ~ '${EXPORTABLE_EMAIL.source}' AND ua.name IS NOT NULL)`;

/**
 * A `users` row aliased `u` (affiliation joined as `ua`) as the JSON text of its PersonExport
 * (`toPersonExport` of its USER_PERSON_COLUMNS), written by PostgreSQL; `role` is an SQL
 * expression. row_to_json writes compact JSON with the fields in PersonExport's order.
 */
export const userPersonJson = (role: string) => `(SELECT row_to_json(pe) FROM (SELECT
    u.first_name, u.last_name, NULLIF(u.email, '') AS email, ${role}::text AS role,
    CASE WHEN ua.name IS NULL THEN ARRAY[]::text[] ELSE ARRAY[ua.name::text] END AS affiliations
  ) pe)`;
