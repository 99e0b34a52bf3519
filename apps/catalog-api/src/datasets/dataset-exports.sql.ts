import { createHash } from 'node:crypto';
import { SqlParams } from '../common/sql-params';
import { USER_EXPORTABLE, userPersonJson } from '../contacts/contact.sql';
import type { Viewer } from '../auth/viewer';
import { DUO_IRIS, USE_CLASS_LABELS } from './use-condition-codes';

/**
 * `object` (the JSON of a row) without its key `key` when that key holds `value` (JSON text):
 * what the catalog does not know is left out where the ELU dataset schema has no such value
 * (docs/decisions/elu-valid-exports.md). Done on the text, which row_to_json writes compactly:
 * unescaped quotes never occur inside a JSON string, so `"key":value` is only ever the key.
 */
const omit = (object: string, key: string, value: string, first = false) =>
  first
    ? `replace(${object}::text, '{"${key}":${value},', '{')::json`
    : `replace(${object}::text, ',"${key}":${value}', '')::json`;

/** A timestamptz as `formatTimestamp` writes it (UTC, whole seconds, `+00:00`). */
const timestamp = (column: string) =>
  `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"+00:00"')`;

/**
 * The datasets of `ids` (a query of their ids), each with the JSON text of its export
 * (contract §3), as a statement of (id, json). Without `source` (a setting of each replica) when
 * it is to be stored: a stored export gets it in front when it is read (`storedJson`); a read
 * renders it in place, which is cheaper than copying every text again. row_to_json and
 * array_to_json write JSON as JSON.stringify does: no spaces, the same escapes, fields in
 * select-list order (the contract's), so the answer is the same bytes. Each list is built for
 * the whole page at once, one `GROUP BY` per table joined back by id, rather than by a subquery
 * per dataset and list (about 17 a dataset, each started anew): about 14% less work for
 * PostgreSQL, most of which is writing the JSON itself. The
 * page's declarations and their use conditions are found by `= ANY (ARRAY(…))`, one index scan
 * for all the ids (joined, they were hashed or merged over the whole table for every page);
 * the other tables by a semi-join (`IN`), which no plan can turn into comparing each row with
 * every id, as a filter on an array could. Lists are `array_agg` of JSON values (json[],
 * written as `[…]` without spaces; json_agg would add spaces and line breaks), `[]` when a row
 * has none; the fields are named in a LATERAL row so that the sort keys stay out of the JSON.
 * Free text is null when empty; `data_types` are sorted by code point, as JavaScript's sort does
 * for them. The same for every viewer (an endpoint's exposure is added by `exportPageSql`).
 */
function renderExportsSql(ids: string, params: SqlParams, source?: string): string {
  const labels = params.add(JSON.stringify(USE_CLASS_LABELS));
  const duo = params.add(JSON.stringify(DUO_IRIS));
  const lists = `page AS MATERIALIZED (${ids}),
    declarations AS MATERIALIZED (SELECT dd.* FROM data_declarations dd
      WHERE dd.dataset_id = ANY (ARRAY(SELECT id FROM page))),
    cohorts_of AS (SELECT ddc.data_declaration_id AS id,
        array_agg(row_to_json(cv) ORDER BY c.name, c.id) AS list
      FROM data_declaration_cohorts ddc JOIN cohorts c ON c.id = ddc.cohort_id
      CROSS JOIN LATERAL (SELECT c.name AS cohort, c.elu_accession AS cohort_external_id) cv
      WHERE ddc.data_declaration_id IN (SELECT id FROM declarations)
      GROUP BY ddc.data_declaration_id),
    use_conditions_of AS (SELECT uc.data_declaration_id AS id,
        array_agg(row_to_json(uv) ORDER BY uc.id) AS list
      FROM use_conditions uc LEFT JOIN json_each_text(${labels}::json) label ON label.key = uc.use_class::text
      LEFT JOIN json_each_text(${duo}::json) term ON term.key = uc.use_class::text
      CROSS JOIN LATERAL (SELECT uc.use_class, label.value AS use_class_label,
        term.value AS duo_iri,
        NULLIF(uc.use_class_note, '') AS use_class_note,
        NULLIF(uc.use_condition_note, '') AS use_condition_note, uc.use_condition_rule) uv
      WHERE uc.data_declaration_id = ANY (ARRAY(SELECT id FROM declarations))
      GROUP BY uc.data_declaration_id),
    declarations_of AS (SELECT dd.dataset_id AS id,
        array_agg(${omit('row_to_json(v)', 'subjects_category', '"unknown"')} ORDER BY dd.id) AS list
      FROM declarations dd
      LEFT JOIN cohorts_of co ON co.id = dd.id
      LEFT JOIN use_conditions_of uo ON uo.id = dd.id
      CROSS JOIN LATERAL (SELECT dd.title, COALESCE(co.list, '{}') AS cohorts,
        ARRAY(SELECT t FROM unnest(dd.data_types) t ORDER BY t COLLATE "C") AS data_types,
        NULLIF(dd.data_types_notes, '') AS data_types_notes, dd.access_category,
        NULLIF(dd.access_procedure, '') AS access_procedure, dd.subjects_category,
        dd.de_identification, dd.consent_status, dd.has_special_subjects,
        dd.special_subjects_description, dd.embargo_date::text AS embargo_date,
        dd.storage_end_date::text AS storage_end_date,
        NULLIF(dd.storage_duration_criteria, '') AS storage_duration_criteria,
        COALESCE(uo.list, '{}') AS use_conditions) v
      GROUP BY dd.dataset_id),
    legal_bases_of AS (SELECT lb.dataset_id AS id,
        array_agg(${omit('row_to_json(v)', 'legal_basis_notes', 'null')} ORDER BY lb.id) AS list
      FROM legal_bases lb
      LEFT JOIN (SELECT x.legal_basis_id AS id, array_agg(dd.title::text ORDER BY dd.id) AS list
        FROM legal_bases b JOIN legal_basis_data_declarations x ON x.legal_basis_id = b.id
        JOIN data_declarations dd ON dd.id = x.data_declaration_id
        WHERE b.dataset_id IN (SELECT id FROM page) GROUP BY x.legal_basis_id) named
        ON named.id = lb.id
      CROSS JOIN LATERAL (SELECT lb.legal_basis_codes::text[] AS legal_basis_codes,
        lb.personal_data_codes::text[] AS personal_data_codes,
        NULLIF(lb.legal_basis_notes, '') AS legal_basis_notes,
        COALESCE(named.list, '{}') AS data_declarations) v
      WHERE lb.dataset_id IN (SELECT id FROM page) GROUP BY lb.dataset_id),
    storages_of AS (SELECT sl.dataset_id AS id,
        array_agg(${omit('(CASE WHEN sl.drs_uri IS NULL THEN row_to_json(v) ELSE row_to_json(w) END)', 'location', 'null')}
          ORDER BY sl.id) AS list
      FROM storage_locations sl
      LEFT JOIN (SELECT x.storage_location_id AS id, array_agg(a.access_notes ORDER BY a.id) AS list
        FROM storage_locations s JOIN access_storage_locations x ON x.storage_location_id = s.id
        JOIN accesses a ON a.id = x.access_id
        WHERE s.dataset_id IN (SELECT id FROM page) GROUP BY x.storage_location_id) noted
        ON noted.id = sl.id
      CROSS JOIN LATERAL (SELECT sl.platform, NULLIF(sl.location, '') AS location,
        COALESCE(noted.list, '{}') AS accesses) v
      -- A copy served by DRS also says where (the members above, then drs_uri).
      CROSS JOIN LATERAL (SELECT v.*, sl.drs_uri) w
      WHERE sl.dataset_id IN (SELECT id FROM page) GROUP BY sl.dataset_id),
    transfers_of AS (SELECT t.dataset_id AS id,
        array_agg(${omit('row_to_json(v)', 'partner', 'null', true)}
          ORDER BY t.transfer_date NULLS LAST, t.id) AS list
      FROM transfers t LEFT JOIN partners pa ON pa.id = t.partner_id
      CROSS JOIN LATERAL (SELECT pa.name AS partner,
        NULLIF(t.transfer_details, '') AS transfer_details,
        t.transfer_date::text AS transfer_date) v
      WHERE t.dataset_id IN (SELECT id FROM page) GROUP BY t.dataset_id),
    contacts_of AS (SELECT x.dataset_id AS id, array_agg(${userPersonJson("'Principal_Investigator'")}
        ORDER BY u.last_name, u.first_name, u.id) AS list
      FROM dataset_local_custodians x JOIN users u ON u.id = x.user_id
      LEFT JOIN partners ua ON ua.id = u.affiliation_id
      WHERE x.dataset_id IN (SELECT id FROM page) AND ${USER_EXPORTABLE}
      GROUP BY x.dataset_id)`;
  const exported = `SELECT ${source === undefined ? '' : `${params.add(source)}::text AS source, `}d.id::text AS id_at_source,
      d.elu_accession AS external_id, d.title AS name,
      NULLIF(d.description, '') AS description, d.elu_uuid,
      NULLIF(d.other_external_id, '') AS other_external_id, p.acronym AS project,
      p.elu_accession AS project_external_id,
      COALESCE(declarations_of.list, '{}') AS data_declarations,
      COALESCE(legal_bases_of.list, '{}') AS legal_bases,
      COALESCE(storages_of.list, '{}') AS storages,
      COALESCE(transfers_of.list, '{}') AS transfers,
      COALESCE(contacts_of.list, '{}') AS contacts, d.metadata`;
  const from = `FROM page JOIN datasets d ON d.id = page.id
    LEFT JOIN projects p ON p.id = d.project_id
    LEFT JOIN declarations_of ON declarations_of.id = d.id
    LEFT JOIN legal_bases_of ON legal_bases_of.id = d.id
    LEFT JOIN storages_of ON storages_of.id = d.id
    LEFT JOIN transfers_of ON transfers_of.id = d.id
    LEFT JOIN contacts_of ON contacts_of.id = d.id
    CROSS JOIN LATERAL (${exported}) x`;
  return `WITH ${lists} SELECT d.id, row_to_json(x)::text AS json ${from}`;
}

/**
 * What a stored export was rendered by: a hash of the rendering statement and of its values
 * (the use-class labels and DUO IRIs). A stored export of another format (code that renders differently) is
 * never used, and the refresher renders it again.
 */
export const EXPORT_FORMAT = (() => {
  const params = new SqlParams();
  const sql = renderExportsSql('SELECT NULL::int AS id', params);
  return createHash('sha256').update(sql).update(JSON.stringify(params.values)).digest('base64url');
})();

/**
 * A stored export's JSON: `source` first, as the contract orders it, then its `fields`, then
 * `end` (an SQL expression: the closing brace, or more fields and the brace). Concatenation
 * only: cutting a text (substr, left) would make PostgreSQL count its characters.
 */
const storedJson = (fields: string, source: string, end: string) =>
  `'{"source":' || ${source}::text || ',' || ${fields} || ${end}`;

/** The stored exports that are still right, in the statement's snapshot (see the migration StoredDatasetExports). */
const currentExport = (format: string) => `e.format = ${format}
  AND e.rendered >= COALESCE((SELECT c.version FROM dataset_export_changes c
    WHERE c.dataset_id = e.dataset_id), 0)`;

/**
 * The datasets of `page` (a query of their ids, in id order) as (id, json, stored), in no
 * particular order: each export is the stored one when it is still right, else rendered here.
 * The validity is read in the same snapshot as the data, so a read never mixes an export from
 * before a write with data after it. The stored texts are read without being sorted or
 * materialised (a page holds about 4.5 MB of them, more than a sort's work_mem); the caller
 * puts the page in id order. An endpoint viewer also gets the fields of its exposure (the
 * active one, else the latest deprecated) after the dataset's, in the same object.
 */
export function exportPageSql(
  page: string,
  params: SqlParams,
  source: string,
  viewer: Viewer,
): string {
  const format = params.add(EXPORT_FORMAT);
  const quotedSource = params.add(JSON.stringify(source));
  const pageExports = `asked AS MATERIALIZED (${page}),
    kept AS MATERIALIZED (SELECT e.dataset_id AS id FROM dataset_exports e
      WHERE e.dataset_id = ANY (ARRAY(SELECT id FROM asked)) AND ${currentExport(format)}),
    exports AS (SELECT e.dataset_id AS id, NULL AS json, e.fields, true AS stored
        FROM dataset_exports e WHERE e.dataset_id = ANY (ARRAY(SELECT id FROM kept))
      UNION ALL SELECT r.id, r.json, NULL, false FROM (${renderExportsSql(
        'SELECT id FROM asked WHERE id NOT IN (SELECT id FROM kept)',
        params,
        source,
      )}) r)`;
  const whole = `COALESCE(x.json, ${storedJson('x.fields', quotedSource, `'}'`)})`;
  if (viewer.kind !== 'endpoint')
    return `WITH ${pageExports} SELECT x.id, ${whole} AS json, x.stored FROM exports x`;
  // The exposures of the whole page in one pass: looked up per dataset, each lookup would read
  // every exposure of the endpoint.
  const exposure = 'substr(row_to_json(ev)::text, 2)';
  return `WITH ${pageExports}
    SELECT x.id, CASE WHEN e.dataset_id IS NULL THEN ${whole}
      WHEN x.json IS NULL THEN ${storedJson('x.fields', quotedSource, `',' || ${exposure}`)}
      ELSE left(x.json, -1) || ',' || ${exposure} END AS json, x.stored
    FROM exports x
    LEFT JOIN (SELECT DISTINCT ON (e.dataset_id) e.* FROM exposures e
      WHERE e.endpoint_id = ${params.add(viewer.endpointId)} AND e.dataset_id IN (SELECT id FROM asked)
      ORDER BY e.dataset_id, e.deprecated_at DESC NULLS FIRST, e.id DESC) e ON e.dataset_id = x.id
    CROSS JOIN LATERAL (SELECT e.form_id, e.deprecated_at IS NOT NULL AS deprecated,
      ${timestamp('e.deprecated_at')} AS deprecation_date,
      ${timestamp('e.created_at')} AS released_date,
      NULLIF(e.deprecation_reason, '') AS deprecation_notes, e.request_pdf_enabled) ev`;
}

/**
 * Renders and stores the exports of up to `limit` datasets (lowest ids first) whose stored
 * export is missing, stale or of another format, with the version read in the same statement,
 * and counts them. Another replica storing the same exports meanwhile is harmless: the later
 * version wins.
 */
export function storeStaleExportsSql(params: SqlParams, limit: number): string {
  const format = params.add(EXPORT_FORMAT);
  // Joined rather than a NOT EXISTS of currentExport: with nothing stale, a scan of 50,000
  // datasets takes ~75 ms instead of 105-155 ms (hash joins instead of a lookup per dataset).
  const stale = `SELECT d.id FROM datasets d
    LEFT JOIN dataset_exports e ON e.dataset_id = d.id
    LEFT JOIN dataset_export_changes c ON c.dataset_id = d.id
    WHERE e.dataset_id IS NULL OR e.format <> ${format} OR e.rendered < COALESCE(c.version, 0)
    ORDER BY d.id LIMIT ${params.add(limit)}`;
  return `WITH stored AS (INSERT INTO dataset_exports (dataset_id, format, rendered, fields)
      SELECT r.id, ${format}, (SELECT version FROM catalog_version WHERE id = 1),
        substr(r.json, 2, length(r.json) - 2)
      FROM (${renderExportsSql(stale, params)}) r
      ON CONFLICT (dataset_id) DO UPDATE
        SET format = excluded.format, rendered = excluded.rendered, fields = excluded.fields
        WHERE dataset_exports.format <> excluded.format OR dataset_exports.rendered < excluded.rendered
      RETURNING 1)
    SELECT count(*)::int AS stored FROM stored`;
}
