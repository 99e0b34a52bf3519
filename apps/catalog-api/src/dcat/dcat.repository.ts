import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { SqlParams } from '../common/sql-params';
import { datasetVisible } from '../permissions/visibility.sql';
import type { Viewer } from '../permissions/viewer';

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
  storages: { id: number; platform: string }[];
  /** Dates of the provisioner imports (transfers with an import id), oldest first. */
  imports: string[];
  custodians: { id: number; first_name: string; last_name: string; email: string }[];
  /** The endpoint viewer's exposure, when it is deprecated (DAISY's `deprecated`). */
  deprecated_at: string | null;
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

  /** The facts of the datasets `ids`, in id order, one statement. */
  async facts(manager: EntityManager, viewer: DcatViewer, ids: number[]): Promise<DatasetFacts[]> {
    const params = new SqlParams();
    const idList = params.add(ids);
    // The exposures of the whole batch in one pass (exposures has no index by dataset alone).
    const endpoint = viewer.kind === 'endpoint' ? params.add(viewer.endpointId) : 'NULL::int';
    const exposed = `SELECT e.dataset_id, min(e.created_at) AS issued,
        bool_and(e.deprecated_at IS NOT NULL) FILTER (WHERE e.endpoint_id = ${endpoint}) AS deprecated,
        max(e.deprecated_at) FILTER (WHERE e.endpoint_id = ${endpoint}) AS deprecated_at
      FROM exposures e WHERE e.dataset_id = ANY(${idList}::int[]) GROUP BY e.dataset_id`;
    const rows = await manager.query<{ facts: DatasetFacts }[]>(
      `SELECT json_build_object(
        'id', d.id, 'accession', d.elu_accession, 'title', d.title,
        'description', NULLIF(d.description, ''), 'elu_uuid', d.elu_uuid,
        'other_external_id', NULLIF(d.other_external_id, ''),
        'modified', ${utc('d.updated_at')},
        'issued', ${utc('x.issued')},
        'project', (SELECT json_build_object('accession', p.elu_accession, 'acronym', p.acronym,
            'title', p.title) FROM projects p WHERE p.id = d.project_id),
        'declarations', COALESCE((SELECT json_agg(json_build_object(
            'title', dd.title, 'data_types', dd.data_types, 'access_category', dd.access_category,
            'de_identification', dd.de_identification,
            'partner', (SELECT pa.name FROM partners pa WHERE pa.id = dd.partner_id),
            'cohorts', COALESCE((SELECT json_agg(json_build_object('name', c.name,
                'accession', c.elu_accession) ORDER BY c.name, c.id)
              FROM data_declaration_cohorts ddc JOIN cohorts c ON c.id = ddc.cohort_id
              WHERE ddc.data_declaration_id = dd.id), '[]'),
            'use_conditions', COALESCE((SELECT json_agg(json_build_object('id', uc.id,
                'use_class', uc.use_class, 'use_class_note', NULLIF(uc.use_class_note, ''),
                'use_condition_note', NULLIF(uc.use_condition_note, ''),
                'use_condition_rule', uc.use_condition_rule) ORDER BY uc.id)
              FROM use_conditions uc WHERE uc.data_declaration_id = dd.id), '[]')
          ) ORDER BY dd.id) FROM data_declarations dd WHERE dd.dataset_id = d.id), '[]'),
        'legal_bases', COALESCE((SELECT json_agg(json_build_object('id', lb.id,
            'legal_basis_codes', lb.legal_basis_codes, 'personal_data_codes', lb.personal_data_codes,
            'legal_basis_notes', NULLIF(lb.legal_basis_notes, '')) ORDER BY lb.id)
          FROM legal_bases lb WHERE lb.dataset_id = d.id), '[]'),
        'storages', COALESCE((SELECT json_agg(json_build_object('id', sl.id, 'platform', sl.platform)
            ORDER BY sl.id) FROM storage_locations sl WHERE sl.dataset_id = d.id), '[]'),
        'imports', COALESCE((SELECT json_agg(t.transfer_date::text ORDER BY t.transfer_date)
            FROM transfers t WHERE t.dataset_id = d.id AND t.import_id IS NOT NULL
              AND t.transfer_date IS NOT NULL), '[]'),
        'custodians', COALESCE((SELECT json_agg(json_build_object('id', u.id,
            'first_name', u.first_name, 'last_name', u.last_name, 'email', u.email)
            ORDER BY u.last_name, u.first_name, u.id)
          FROM dataset_local_custodians x JOIN users u ON u.id = x.user_id
          WHERE x.dataset_id = d.id), '[]'),
        'deprecated_at', CASE WHEN x.deprecated THEN ${utc('x.deprecated_at')} END
      ) AS facts
      FROM datasets d LEFT JOIN (${exposed}) x ON x.dataset_id = d.id
      WHERE d.id = ANY(${idList}::int[]) ORDER BY d.id`,
      params.values,
    );
    return rows.map((row) => row.facts);
  }
}
