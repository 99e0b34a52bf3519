import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { SqlParams } from '../common/sql-params';
import { datasetVisible } from '../visibility/visibility.sql';
import type { Viewer } from '../auth/viewer';

/** Who reads the DCAT catalog: a key's viewer, or an anonymous caller (published datasets only). */
export type DcatViewer = Viewer | { kind: 'anonymous' };

/** What the DCAT mapping reads of one dataset (dcat.exporter.ts maps it; docs/dcat.md lists it). */
export interface DatasetFacts {
  id: number;
  accession: string;
  title: string;
  description: string | null;
  elu_uuid: string;
  other_external_id: string | null;
  modified: string;
  /** When it was first exposed (released); null when never. */
  issued: string | null;
  project: { accession: string | null; acronym: string; title: string } | null;
  declarations: {
    title: string;
    data_types: string[];
    access_category: 'open_access' | 'registered_access' | 'controlled_access' | null;
    de_identification: 'anonymization' | 'pseudonymization';
    partner: string | null;
    cohorts: { name: string; accession: string | null }[];
    use_conditions: {
      id: number;
      use_class: string;
      use_class_note: string | null;
      use_condition_note: string | null;
      use_condition_rule: string;
    }[];
  }[];
  legal_bases: {
    id: number;
    legal_basis_codes: string[];
    personal_data_codes: string[];
    legal_basis_notes: string | null;
  }[];
  /** Storage copies; the provisioner's size and manifest checksum where it registered them. */
  storages: {
    id: number;
    platform: string;
    byte_size: number | null;
    manifest_sha256: string | null;
    drs_uri: string | null;
  }[];
  /** Dates of the provisioner imports (transfers with an import id), oldest first. */
  imports: string[];
  custodians: { id: number; first_name: string; last_name: string; email: string }[];
  /** The endpoint viewer's exposure, when it is deprecated (DAISY's `deprecated`). */
  deprecated_at: string | null;
  /** Tagged for the EJP RD Virtual Platform in the FAIR Data Point (its own flag). */
  vp_discoverable: boolean;
}

/** Predicate on a `datasets` row aliased `d`: what the viewer may see. */
function visible(viewer: DcatViewer, params: SqlParams): string {
  if (viewer.kind === 'anonymous') {
    // Published: at least one exposure that is not deprecated (contract §3).
    return 'EXISTS (SELECT 1 FROM exposures ve WHERE ve.dataset_id = d.id AND ve.deprecated_at IS NULL)';
  }
  return datasetVisible(viewer, params);
}

const utc = (column: string) =>
  `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')`;

/** The DCAT view of the datasets, in the caller's transaction (`manager`). */
@Injectable()
export class DcatRepository {
  /** How many datasets the viewer may see (all, or the one with `accession`). */
  async count(manager: EntityManager, viewer: DcatViewer, accession?: string): Promise<number> {
    const params = new SqlParams();
    const only = accession === undefined ? '' : `AND d.elu_accession = ${params.add(accession)}`;
    const [{ n }] = await manager.query<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM datasets d WHERE ${visible(viewer, params)} ${only}`,
      params.values,
    );
    return n;
  }

  /**
   * When the viewer's datasets (all, or the one with `accession`) were first released and when
   * what it sees of them last changed: the latest dataset update, release or withdrawal (a
   * withdrawal anywhere changes every listing).
   */
  async lifetime(
    manager: EntityManager,
    viewer: DcatViewer,
    accession?: string,
  ): Promise<{ issued: string | null; modified: string | null }> {
    const params = new SqlParams();
    const only = accession === undefined ? '' : `AND d.elu_accession = ${params.add(accession)}`;
    const [row] = await manager.query<{ issued: string | null; modified: string | null }[]>(
      `SELECT ${utc('min(e.created_at)')} AS issued,
         ${utc(`greatest(max(d.updated_at), max(e.created_at), max(e.deprecated_at),
           (SELECT max(w.deprecated_at) FROM exposures w))`)} AS modified
       FROM datasets d LEFT JOIN exposures e ON e.dataset_id = d.id
       WHERE ${visible(viewer, params)} ${only}`,
      params.values,
    );
    return row;
  }

  /**
   * `lifetime` of each of the datasets `ids` (visible to the caller: the FAIR Data Point's
   * dataset records), in one statement for the whole batch, by accession.
   */
  async lifetimes(
    manager: EntityManager,
    ids: number[],
  ): Promise<Map<string, { issued: string | null; modified: string | null }>> {
    const rows = await manager.query<
      { accession: string; issued: string | null; modified: string | null }[]
    >(
      `SELECT d.elu_accession AS accession, ${utc('min(e.created_at)')} AS issued,
         ${utc(`greatest(d.updated_at, max(e.created_at), max(e.deprecated_at),
           (SELECT max(w.deprecated_at) FROM exposures w))`)} AS modified
       FROM datasets d LEFT JOIN exposures e ON e.dataset_id = d.id
       WHERE d.id = ANY ($1::int[]) GROUP BY d.id`,
      [ids],
    );
    return new Map(rows.map(({ accession, ...times }) => [accession, times]));
  }

  /** Whether the dataset was published once and is no longer: every exposure withdrawn. */
  async withdrawn(manager: EntityManager, accession: string): Promise<boolean> {
    const [row] = await manager.query<{ withdrawn: boolean }[]>(
      `SELECT count(e.id) > 0 AND bool_and(e.deprecated_at IS NOT NULL) AS withdrawn
       FROM datasets d JOIN exposures e ON e.dataset_id = d.id WHERE d.elu_accession = $1`,
      [accession],
    );
    return row?.withdrawn ?? false;
  }

  /**
   * As for the JSON export: compiling the facts statement's plan (JIT) costs more than the
   * statement itself. SET LOCAL ends with the caller's transaction.
   */
  async withoutJit(manager: EntityManager): Promise<void> {
    await manager.query('SET LOCAL jit = off');
  }

  /**
   * The viewer's datasets of a catalog page, in id order: `limit` after skipping `offset`, with
   * their accessions (the page's dcat:dataset IRIs), in one statement. The rows skipped are
   * found in the primary key's index alone; only the page's own rows are read for accessions.
   */
  async pageMembers(
    manager: EntityManager,
    viewer: DcatViewer,
    offset: number,
    limit: number,
  ): Promise<{ ids: number[]; accessions: string[] }> {
    const params = new SqlParams();
    const rows = await manager.query<{ id: number; accession: string }[]>(
      `SELECT m.id, m.elu_accession AS accession
       FROM (SELECT d.id FROM datasets d WHERE ${visible(viewer, params)}
         ORDER BY d.id OFFSET ${params.add(offset)} LIMIT ${params.add(limit)}) page
       JOIN datasets m ON m.id = page.id ORDER BY m.id`,
      params.values,
    );
    return { ids: rows.map((row) => row.id), accessions: rows.map((row) => row.accession) };
  }

  /** Ids of the viewer's datasets in id order: `limit` after skipping `offset`. */
  async pageIds(
    manager: EntityManager,
    viewer: DcatViewer,
    offset: number,
    limit: number,
    accession?: string,
  ): Promise<number[]> {
    const params = new SqlParams();
    const only = accession === undefined ? '' : `AND d.elu_accession = ${params.add(accession)}`;
    const rows = await manager.query<{ id: number }[]>(
      `SELECT d.id FROM datasets d WHERE ${visible(viewer, params)} ${only}
       ORDER BY d.id OFFSET ${params.add(offset)} LIMIT ${params.add(limit)}`,
      params.values,
    );
    return rows.map((row) => row.id);
  }

  /**
   * The facts of the datasets `ids`, in id order, in one statement whose work does not grow with
   * a subquery per dataset: each list is aggregated for the whole batch at once, one `GROUP BY`
   * per table joined back by id (as the JSON export does, datasets/dataset-exports.sql.ts). Rows
   * are found by `= ANY` of the batch's ids, one index scan a table for the whole batch: a
   * semi-join was planned as a scan of the whole table for every batch. Exposures have no index
   * by dataset alone and are read in one scan a batch, as before. A dataset's project is the
   * exception, a subquery by primary key: joined, it was planned as a scan and a hash of every
   * project for each batch, a fifth of the statement's time.
   */
  async facts(manager: EntityManager, viewer: DcatViewer, ids: number[]): Promise<DatasetFacts[]> {
    return (await this.factsText(manager, viewer, ids)).map(
      (text) => JSON.parse(text) as DatasetFacts,
    );
  }

  /**
   * `facts` as JSON text, one string a dataset, for a caller that parses each dataset as it maps
   * it: a batch waiting to be mapped is then a few flat strings, not a graph of objects that the
   * young generation's collections copy, and promote, while the batch before it is mapped.
   */
  async factsText(manager: EntityManager, viewer: DcatViewer, ids: number[]): Promise<string[]> {
    const params = new SqlParams();
    const rows = await manager.query<{ facts: string }[]>(
      this.factsStatement(viewer, ids, params),
      params.values,
    );
    return rows.map((row) => row.facts);
  }

  /** The statement of `facts`, its parameters added to `params`; its column `facts` as text. */
  private factsStatement(viewer: DcatViewer, ids: number[], params: SqlParams): string {
    const idList = params.add(ids);
    const endpoint = viewer.kind === 'endpoint' ? params.add(viewer.endpointId) : 'NULL::int';
    const lists = `declarations AS MATERIALIZED (SELECT dd.* FROM data_declarations dd
      WHERE dd.dataset_id = ANY (${idList}::int[])),
    cohorts_of AS (SELECT ddc.data_declaration_id AS id, json_agg(json_build_object(
        'name', c.name, 'accession', c.elu_accession) ORDER BY c.name, c.id) AS list
      FROM data_declaration_cohorts ddc JOIN cohorts c ON c.id = ddc.cohort_id
      WHERE ddc.data_declaration_id IN (SELECT id FROM declarations)
      GROUP BY ddc.data_declaration_id),
    use_conditions_of AS (SELECT uc.data_declaration_id AS id, json_agg(json_build_object(
        'id', uc.id, 'use_class', uc.use_class, 'use_class_note', NULLIF(uc.use_class_note, ''),
        'use_condition_note', NULLIF(uc.use_condition_note, ''),
        'use_condition_rule', uc.use_condition_rule) ORDER BY uc.id) AS list
      FROM use_conditions uc
      WHERE uc.data_declaration_id = ANY (ARRAY(SELECT id FROM declarations))
      GROUP BY uc.data_declaration_id),
    declarations_of AS (SELECT dd.dataset_id AS id, json_agg(json_build_object(
        'title', dd.title, 'data_types', dd.data_types, 'access_category', dd.access_category,
        'de_identification', dd.de_identification, 'partner', pa.name,
        'cohorts', COALESCE(co.list, '[]'), 'use_conditions', COALESCE(uo.list, '[]'))
        ORDER BY dd.id) AS list
      FROM declarations dd LEFT JOIN partners pa ON pa.id = dd.partner_id
      LEFT JOIN cohorts_of co ON co.id = dd.id LEFT JOIN use_conditions_of uo ON uo.id = dd.id
      GROUP BY dd.dataset_id),
    legal_bases_of AS (SELECT lb.dataset_id AS id, json_agg(json_build_object('id', lb.id,
        'legal_basis_codes', lb.legal_basis_codes, 'personal_data_codes', lb.personal_data_codes,
        'legal_basis_notes', NULLIF(lb.legal_basis_notes, '')) ORDER BY lb.id) AS list
      FROM legal_bases lb WHERE lb.dataset_id = ANY (${idList}::int[]) GROUP BY lb.dataset_id),
    storages_of AS (SELECT sl.dataset_id AS id,
        json_agg(json_build_object('id', sl.id, 'platform', sl.platform,
          'byte_size', sl.byte_size, 'manifest_sha256', sl.manifest_sha256,
          'drs_uri', sl.drs_uri) ORDER BY sl.id) AS list
      FROM storage_locations sl WHERE sl.dataset_id = ANY (${idList}::int[])
      GROUP BY sl.dataset_id),
    imports_of AS (SELECT t.dataset_id AS id,
        json_agg(t.transfer_date::text ORDER BY t.transfer_date) AS list
      FROM transfers t WHERE t.dataset_id = ANY (${idList}::int[])
        AND t.import_id IS NOT NULL AND t.transfer_date IS NOT NULL
      GROUP BY t.dataset_id),
    custodians_of AS (SELECT x.dataset_id AS id, json_agg(json_build_object('id', u.id,
        'first_name', u.first_name, 'last_name', u.last_name, 'email', u.email)
        ORDER BY u.last_name, u.first_name, u.id) AS list
      FROM dataset_local_custodians x JOIN users u ON u.id = x.user_id
      WHERE x.dataset_id = ANY (${idList}::int[]) GROUP BY x.dataset_id),
    exposed AS (SELECT e.dataset_id AS id, min(e.created_at) AS issued,
        bool_and(e.deprecated_at IS NOT NULL) FILTER (WHERE e.endpoint_id = ${endpoint}) AS deprecated,
        max(e.deprecated_at) FILTER (WHERE e.endpoint_id = ${endpoint}) AS deprecated_at
      FROM exposures e WHERE e.dataset_id = ANY (${idList}::int[]) GROUP BY e.dataset_id)`;
    return `WITH ${lists} SELECT json_build_object(
        'id', d.id, 'accession', d.elu_accession, 'title', d.title,
        'description', NULLIF(d.description, ''), 'elu_uuid', d.elu_uuid,
        'other_external_id', NULLIF(d.other_external_id, ''),
        'modified', ${utc('d.updated_at')},
        'issued', ${utc('x.issued')},
        'project', (SELECT json_build_object('accession', p.elu_accession,
            'acronym', p.acronym, 'title', p.title) FROM projects p WHERE p.id = d.project_id),
        'declarations', COALESCE(declarations_of.list, '[]'),
        'legal_bases', COALESCE(legal_bases_of.list, '[]'),
        'storages', COALESCE(storages_of.list, '[]'),
        'imports', COALESCE(imports_of.list, '[]'),
        'custodians', COALESCE(custodians_of.list, '[]'),
        'deprecated_at', CASE WHEN x.deprecated THEN ${utc('x.deprecated_at')} END,
        'vp_discoverable', d.vp_discoverable
      )::text AS facts
      FROM datasets d
      LEFT JOIN exposed x ON x.id = d.id
      LEFT JOIN declarations_of ON declarations_of.id = d.id
      LEFT JOIN legal_bases_of ON legal_bases_of.id = d.id
      LEFT JOIN storages_of ON storages_of.id = d.id
      LEFT JOIN imports_of ON imports_of.id = d.id
      LEFT JOIN custodians_of ON custodians_of.id = d.id
      WHERE d.id = ANY (${idList}::int[]) ORDER BY d.id`;
  }
}
