import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import {
  accessionFilter,
  exactFilterConditions,
  idFilter,
  textFilter,
  type ExactFilter,
} from '../common/exact-filters.sql';
import { SqlParams } from '../common/sql-params';
import { userPersonJson } from '../contacts/contact.exporter';
import { DatabaseRepository, SnapshotReader } from '../database/database.repository';
import { datasetVisible } from '../permissions/visibility.sql';
import type { Viewer } from '../permissions/viewer';
import { USE_CLASS_LABELS } from './use-condition-codes';

export interface DatasetFilter {
  projectId?: number;
  projectTitle?: string;
  /** Values of DATASET_FILTERS, by parameter name. */
  exact?: Record<string, string | number>;
}

/** The exact filters of `GET /api/datasets` (DAISY's dataset attributes, then record keys). */
export const DATASET_FILTERS: readonly ExactFilter[] = [
  idFilter('d.id'),
  accessionFilter('d.elu_accession'),
  textFilter(['title', 'name'], 'd.title', 255),
  {
    names: ['unique_id', 'elu_uuid'],
    column: 'd.elu_uuid',
    value: { type: 'uuid' },
    description: 'UUID',
  },
];

/** A timestamptz as `formatTimestamp` writes it (UTC, whole seconds, `+00:00`). */
const timestamp = (column: string) =>
  `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"+00:00"')`;

/**
 * The datasets of `page` (a query of their ids), in id order, with the JSON text of each one's
 * export (contract §3). row_to_json and array_to_json write JSON as JSON.stringify does: no
 * spaces, the same escapes, fields in select-list order (the contract's), so the answer is the
 * same bytes. Each list is built for the whole page at once, one `GROUP BY` per table joined
 * back by id, rather than by a subquery per dataset and list (about 17 a dataset, each started
 * anew): about 14% less work for PostgreSQL, most of which is writing the JSON itself. The
 * page's declarations and their use conditions are found by `= ANY (ARRAY(…))`, one index scan
 * for all the ids (joined, they were hashed or merged over the whole table for every page);
 * the other tables by a semi-join (`IN`), which no plan can turn into comparing each row with
 * every id, as a filter on an array could. Lists are `array_agg` of JSON values (json[],
 * written as `[…]` without spaces; json_agg would add spaces and line breaks), `[]` when a row
 * has none; the fields are named in a LATERAL row so that the sort keys stay out of the JSON.
 * Free text is null when empty; `data_types` are sorted by code point, as JavaScript's sort does
 * for them. An endpoint viewer also gets the fields of its exposure (the active one, else the
 * latest deprecated).
 */
function datasetExportsSql(page: string, params: SqlParams, source: string, viewer: Viewer) {
  const labels = params.add(JSON.stringify(USE_CLASS_LABELS));
  const lists = `page AS MATERIALIZED (${page}),
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
      CROSS JOIN LATERAL (SELECT uc.use_class, label.value AS use_class_label,
        NULLIF(uc.use_class_note, '') AS use_class_note,
        NULLIF(uc.use_condition_note, '') AS use_condition_note, uc.use_condition_rule) uv
      WHERE uc.data_declaration_id = ANY (ARRAY(SELECT id FROM declarations))
      GROUP BY uc.data_declaration_id),
    declarations_of AS (SELECT dd.dataset_id AS id, array_agg(row_to_json(v) ORDER BY dd.id) AS list
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
    legal_bases_of AS (SELECT lb.dataset_id AS id, array_agg(row_to_json(v) ORDER BY lb.id) AS list
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
    storages_of AS (SELECT sl.dataset_id AS id, array_agg(row_to_json(v) ORDER BY sl.id) AS list
      FROM storage_locations sl
      LEFT JOIN (SELECT x.storage_location_id AS id, array_agg(a.access_notes ORDER BY a.id) AS list
        FROM storage_locations s JOIN access_storage_locations x ON x.storage_location_id = s.id
        JOIN accesses a ON a.id = x.access_id
        WHERE s.dataset_id IN (SELECT id FROM page) GROUP BY x.storage_location_id) noted
        ON noted.id = sl.id
      CROSS JOIN LATERAL (SELECT sl.platform, NULLIF(sl.location, '') AS location,
        COALESCE(noted.list, '{}') AS accesses) v
      WHERE sl.dataset_id IN (SELECT id FROM page) GROUP BY sl.dataset_id),
    transfers_of AS (SELECT t.dataset_id AS id,
        array_agg(row_to_json(v) ORDER BY t.transfer_date NULLS LAST, t.id) AS list
      FROM transfers t LEFT JOIN partners pa ON pa.id = t.partner_id
      CROSS JOIN LATERAL (SELECT pa.name AS partner,
        NULLIF(t.transfer_details, '') AS transfer_details,
        t.transfer_date::text AS transfer_date) v
      WHERE t.dataset_id IN (SELECT id FROM page) GROUP BY t.dataset_id),
    contacts_of AS (SELECT x.dataset_id AS id, array_agg(${userPersonJson("'Principal_Investigator'")}
        ORDER BY u.last_name, u.first_name, u.id) AS list
      FROM dataset_local_custodians x JOIN users u ON u.id = x.user_id
      LEFT JOIN partners ua ON ua.id = u.affiliation_id
      WHERE x.dataset_id IN (SELECT id FROM page) GROUP BY x.dataset_id)`;
  const exported = `SELECT ${params.add(source)}::text AS source, d.id::text AS id_at_source,
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
  if (viewer.kind !== 'endpoint')
    return `WITH ${lists} SELECT d.id, row_to_json(x)::text AS json ${from} ORDER BY d.id`;
  // The exposures of the whole page in one pass (the active one, else the latest deprecated):
  // looked up per dataset, each lookup would read every exposure of the endpoint. Their fields
  // follow the dataset's, in the same object.
  return `WITH ${lists}
    SELECT d.id, CASE WHEN e.dataset_id IS NULL THEN row_to_json(x)::text
      ELSE left(row_to_json(x)::text, -1) || ',' || substr(row_to_json(ev)::text, 2) END AS json
    ${from}
    LEFT JOIN (SELECT DISTINCT ON (e.dataset_id) e.* FROM exposures e
      WHERE e.endpoint_id = ${params.add(viewer.endpointId)} AND e.dataset_id IN (SELECT id FROM page)
      ORDER BY e.dataset_id, e.deprecated_at DESC NULLS FIRST, e.id DESC) e ON e.dataset_id = d.id
    CROSS JOIN LATERAL (SELECT e.form_id, e.deprecated_at IS NOT NULL AS deprecated,
      ${timestamp('e.deprecated_at')} AS deprecation_date,
      ${timestamp('e.created_at')} AS released_date,
      NULLIF(e.deprecation_reason, '') AS deprecation_notes, e.request_pdf_enabled) ev
    ORDER BY d.id`;
}

/** A dataset and the JSON text of its export. */
interface ExportRow {
  id: number;
  json: string;
}

/** A dataset declaration as an import matches it: by dataset and title. */
export interface DeclarationKeyRow {
  id: number;
  dataset_id: number;
  title: string;
}

/** A legal basis naming a declaration of its dataset by title (trimmed and lower-cased). */
export interface LegalBasisDeclarationLink {
  basis: number;
  dataset: number;
  title: string;
}

/**
 * Datasets and what belongs to them (declarations, use conditions, legal bases, storage
 * locations, transfers), in the caller's transaction (`manager`).
 */
@Injectable()
export class DatasetsRepository {
  constructor(private readonly database: DatabaseRepository) {}

  /**
   * The datasets the viewer may see, narrowed by `filter`, page by page in id order (`pageSize`
   * datasets a page, the last page possibly shorter), each as the JSON text of its export
   * (contract §3) with `source`, in one statement per page. PostgreSQL writes the JSON: Node
   * copies the text into the answer instead of building a graph of objects per dataset.
   * Read the pages in one REPEATABLE READ transaction (`manager`) for one consistent snapshot.
   */
  async *findExportPages(
    manager: EntityManager,
    viewer: Viewer,
    filter: DatasetFilter,
    source: string,
    pageSize: number,
  ): AsyncGenerator<string[]> {
    // Compiling this statement's plan (JIT) costs more than it saves: ~50 ms a page, the time
    // of 800 datasets. SET LOCAL ends with the read's transaction.
    await manager.query('SET LOCAL jit = off');
    const pageAfter = (reader: EntityManager, after: number, skip: number) => {
      const params = new SqlParams();
      const conditions = [datasetVisible(viewer, params), `d.id > ${params.add(after)}`];
      if (filter.projectId !== undefined)
        conditions.push(`d.project_id = ${params.add(filter.projectId)}`);
      if (filter.projectTitle !== undefined) {
        conditions.push(`lower(p.title) = lower(${params.add(filter.projectTitle)})`);
      }
      conditions.push(...exactFilterConditions(DATASET_FILTERS, filter.exact ?? {}, params));
      const page = `SELECT d.id FROM datasets d LEFT JOIN projects p ON p.id = d.project_id
        WHERE ${conditions.join(' AND ')} ORDER BY d.id
        OFFSET ${params.add(skip)} LIMIT ${params.add(pageSize)}`;
      return reader.query<ExportRow[]>(
        datasetExportsSql(page, params, source, viewer),
        params.values,
      );
    };
    // Pages asked for and not yet handed over, in id order; each page, once read, asks for the
    // one after those: PostgreSQL writes them while the caller copies this one. Writing the
    // JSON is most of the work (about 50 µs of one core a dataset), so from the second page on
    // a second connection on the same snapshot writes every other page, when the pool has one
    // free: two pages ahead at most.
    const ahead: { reader: EntityManager; rows: Promise<ExportRow[]> }[] = [];
    const ask = (reader: EntityManager, after: number) =>
      ahead.push({ reader, rows: pageAfter(reader, after, ahead.length * pageSize) });
    let second: SnapshotReader | undefined;
    let single = true;
    ask(manager, 0);
    try {
      while (ahead.length > 0) {
        const { reader, rows: asked } = ahead.shift()!;
        const rows = await asked;
        if (rows.length === pageSize) {
          const last = rows[rows.length - 1].id;
          if (single) {
            // More than one page: the second reader joins before the next page is asked for
            // (its snapshot is exported on this connection, which would otherwise be busy).
            single = false;
            second = await this.database.snapshotReader(manager);
            await second?.manager.query('SET LOCAL jit = off');
            ask(reader, last);
            if (second !== undefined) ask(second.manager, last);
          } else {
            ask(reader, last);
          }
        }
        if (rows.length > 0) yield rows.map((row) => row.json);
      }
    } finally {
      // A caller that stops early: the queries asked for ahead end before the transactions do.
      for (const page of ahead) await page.rows.catch(() => undefined);
      await second?.release();
    }
  }

  /**
   * Ids by accession of the datasets with one of `accessions`; with `lock`, their rows are
   * share-locked for the transaction (none can be deleted or re-keyed under it).
   */
  async idsByAccession(
    manager: EntityManager,
    accessions: string[],
    lock: boolean,
  ): Promise<Map<string, number>> {
    const rows = await manager.query<{ id: number; elu_accession: string }[]>(
      `SELECT id, elu_accession FROM datasets WHERE elu_accession = ANY($1::text[])
       ${lock ? 'FOR KEY SHARE' : ''}`,
      [accessions],
    );
    return new Map(rows.map((row) => [row.elu_accession, row.id]));
  }

  /** A dataset by accession, else by exact title. */
  async idByAccessionOrTitle(manager: EntityManager, ref: string): Promise<number | undefined> {
    const rows = await manager.query<{ id: number }[]>(
      'SELECT id FROM datasets WHERE elu_accession = $1 OR title = $1 ORDER BY (elu_accession = $1) DESC LIMIT 1',
      [ref],
    );
    return rows[0]?.id;
  }

  /** The declarations of the datasets, keyed as an import matches them. */
  declarationsOf(manager: EntityManager, datasetIds: number[]): Promise<DeclarationKeyRow[]> {
    return manager.query<DeclarationKeyRow[]>(
      'SELECT id, dataset_id, title FROM data_declarations WHERE dataset_id = ANY($1::int[])',
      [datasetIds],
    );
  }

  /** Removes the datasets' declarations other than `keptIds` (with what hangs on them). */
  async deleteDeclarationsExcept(
    manager: EntityManager,
    datasetIds: number[],
    keptIds: number[],
  ): Promise<void> {
    await manager.query(
      'DELETE FROM data_declarations WHERE dataset_id = ANY($1::int[]) AND NOT (id = ANY($2::int[]))',
      [datasetIds, keptIds],
    );
  }

  /** Removes the use conditions of the declarations. */
  async deleteUseConditions(manager: EntityManager, declarationIds: number[]): Promise<void> {
    await manager.query('DELETE FROM use_conditions WHERE data_declaration_id = ANY($1::int[])', [
      declarationIds,
    ]);
  }

  /** Removes the datasets' legal bases (their declaration links go with them). */
  async deleteLegalBases(manager: EntityManager, datasetIds: number[]): Promise<void> {
    await manager.query('DELETE FROM legal_bases WHERE dataset_id = ANY($1::int[])', [datasetIds]);
  }

  /** Links each legal basis to its dataset's declaration of that title (one statement). */
  async linkLegalBases(manager: EntityManager, links: LegalBasisDeclarationLink[]): Promise<void> {
    await manager.query(
      `INSERT INTO legal_basis_data_declarations (legal_basis_id, data_declaration_id)
     SELECT l.basis, d.id
     FROM unnest($1::int[], $2::int[], $3::text[]) AS l(basis, dataset, title)
     JOIN data_declarations d ON d.dataset_id = l.dataset AND lower(d.title) = l.title
     ON CONFLICT DO NOTHING`,
      [links.map((n) => n.basis), links.map((n) => n.dataset), links.map((n) => n.title)],
    );
  }

  /** Removes the datasets' transfers. */
  async deleteTransfers(manager: EntityManager, datasetIds: number[]): Promise<void> {
    await manager.query('DELETE FROM transfers WHERE dataset_id = ANY($1::int[])', [datasetIds]);
  }

  /** Removes the datasets' storage locations (their access links go with them). */
  async deleteStorageLocations(manager: EntityManager, datasetIds: number[]): Promise<void> {
    await manager.query('DELETE FROM storage_locations WHERE dataset_id = ANY($1::int[])', [
      datasetIds,
    ]);
  }
}
