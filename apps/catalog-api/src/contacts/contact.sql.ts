import { EXPORTABLE_EMAIL } from './contact.exporter';

/*
 * Select-list fragments the projects, datasets, contracts and cohorts repositories compose: each
 * fills the row type in contact.exporter.ts whose mapping reads it (FullContactRow, PersonRow),
 * so a column and its export field change together.
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
