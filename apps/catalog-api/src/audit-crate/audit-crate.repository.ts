import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { AuditRow } from '../audit/audit.repository';

/** The DAISY project an audit crate is about (safe project). */
export interface CrateProject {
  id: number;
  acronym: string;
  title: string;
  description: string | null;
  accession: string | null;
  start_date: string | null;
  end_date: string | null;
  has_institutional_ethics_approval: boolean;
  institutional_ethics_approval_notes: string | null;
  has_national_ethics_approval: boolean;
  national_ethics_approval_notes: string | null;
}

/** One of its datasets (safe data), with its legal bases and DRS copies. */
export interface CrateDataset {
  id: number;
  accession: string | null;
  title: string;
  legal_bases: {
    legal_basis_codes: string[];
    personal_data_codes: string[];
    legal_basis_notes: string | null;
  }[];
  copies: {
    platform: string;
    drs_uri: string;
    byte_size: string | null;
    manifest_sha256: string | null;
  }[];
}

/** One of its contracts, with the partners and their GDPR roles. */
export interface CrateContract {
  id: number;
  name: string | null;
  partners: { name: string; roles: string[] }[];
}

/**
 * Which trail entries are the project's: its own, its datasets' (by id or accession), its
 * contracts', the accesses to and exposures of its datasets, visas and DRS events naming one of
 * its datasets or DRS objects.
 */
export interface CrateScope {
  projectId: number;
  datasetIds: number[];
  /** Ids and accessions of the datasets, as text (entries name a dataset either way). */
  datasetKeys: string[];
  contractIds: string[];
  drsObjectIds: string[];
}

/** One trail entry as exported: its fields, the hashed text of its body and its hashes. */
export interface CrateTrailRow extends Omit<AuditRow, 'change'> {
  seq: string;
  event_id: string;
  at: Date;
  change: Record<string, unknown>;
  /** `audit_log_body(row)`: the exact text hashed, `hash = sha256(prev_hash || body)`. */
  body: string;
  prev_hash: string;
  hash: string;
  /** For an access entry: the access's dataset accession and the holder's subject. */
  access_dataset: string | null;
  access_subject: string | null;
}

/** The newest signed pruning checkpoint, if the trail was ever pruned. */
export interface CrateCheckpoint {
  seq: string;
  hash: string;
  entry_at: Date;
  key_id: string;
  jws: string;
}

/**
 * What an auditor's export of one project reads: the project's records, once, and its trail
 * entries a window of positions at a time, so no statement reads more than a window and no
 * connection is held between windows.
 */
@Injectable()
export class AuditCrateRepository {
  async project(manager: EntityManager, acronym: string): Promise<CrateProject | undefined> {
    const [row] = await manager.query<CrateProject[]>(
      `SELECT id, acronym, title, NULLIF(description, '') AS description,
              elu_accession AS accession, start_date::text AS start_date, end_date::text AS end_date,
              has_institutional_ethics_approval,
              NULLIF(institutional_ethics_approval_notes, '') AS institutional_ethics_approval_notes,
              has_national_ethics_approval,
              NULLIF(national_ethics_approval_notes, '') AS national_ethics_approval_notes
       FROM projects WHERE acronym = $1`,
      [acronym],
    );
    return row;
  }

  async datasets(manager: EntityManager, projectId: number): Promise<CrateDataset[]> {
    return manager.query<CrateDataset[]>(
      `SELECT d.id, d.elu_accession AS accession, d.title,
              COALESCE((SELECT json_agg(json_build_object(
                  'legal_basis_codes', lb.legal_basis_codes::text[],
                  'personal_data_codes', lb.personal_data_codes::text[],
                  'legal_basis_notes', NULLIF(lb.legal_basis_notes, '')) ORDER BY lb.id)
                FROM legal_bases lb WHERE lb.dataset_id = d.id), '[]') AS legal_bases,
              COALESCE((SELECT json_agg(json_build_object(
                  'platform', sl.platform, 'drs_uri', sl.drs_uri,
                  'byte_size', sl.byte_size::text, 'manifest_sha256', sl.manifest_sha256)
                  ORDER BY sl.id)
                FROM storage_locations sl WHERE sl.dataset_id = d.id AND sl.drs_uri IS NOT NULL),
                '[]') AS copies
       FROM datasets d WHERE d.project_id = $1 ORDER BY d.id`,
      [projectId],
    );
  }

  async contracts(manager: EntityManager, projectId: number): Promise<CrateContract[]> {
    return manager.query<CrateContract[]>(
      `SELECT c.id, c.name,
              COALESCE((SELECT json_agg(json_build_object('name', p.name, 'roles', r.gdpr_roles::text[])
                  ORDER BY p.name, r.id)
                FROM contract_partner_roles r JOIN partners p ON p.id = r.partner_id
                WHERE r.contract_id = c.id), '[]') AS partners
       FROM contracts c WHERE c.project_id = $1 ORDER BY c.id`,
      [projectId],
    );
  }

  /**
   * The project's trail entries at positions `after` < seq <= `upTo`, in chain order; with
   * `types`, only those `<object>.<action>`s. The caller bounds the window (a few thousand
   * positions), so a statement reads at most that many entries whatever the project's share of
   * the trail. The window is read first, by the primary key alone (a materialised CTE), then
   * filtered: with a LIMIT instead, or the filters beside the range, the planner gathered and
   * sorted every match, or built a bitmap of every DRS event, for each statement (past the
   * statement time-out, or minutes per export, with a million entries).
   */
  async trailPage(
    manager: EntityManager,
    scope: CrateScope,
    after: string,
    upTo: string,
    types?: string[],
  ): Promise<CrateTrailRow[]> {
    return manager.query<CrateTrailRow[]>(
      `WITH win AS MATERIALIZED (SELECT * FROM audit_log WHERE id > $1::bigint AND id <= $2::bigint)
       SELECT a.id::text AS seq, a.event_id, a.at, a.actor_kind, a.actor_id, a.actor_name,
              a.action, a.object_type, a.object_id, a.change,
              audit_log_body(a::audit_log) AS body, encode(a.prev_hash, 'hex') AS prev_hash,
              encode(a.hash, 'hex') AS hash,
              ad.elu_accession AS access_dataset,
              COALESCE(ac.request_subject, au.oidc_id, acn.oidc_id) AS access_subject
       FROM win a
       LEFT JOIN accesses ac ON a.object_type = 'access' AND ac.id::text = a.object_id
       LEFT JOIN datasets ad ON ad.id = ac.dataset_id
       LEFT JOIN users au ON au.id = ac.user_id
       LEFT JOIN contacts acn ON acn.id = ac.contact_id
       WHERE ($8::text[] IS NULL OR a.object_type || '.' || a.action = ANY($8::text[]))
         AND (
           (a.object_type = 'access' AND ac.dataset_id = ANY($3::int[]))
           OR (a.object_type = 'dataset' AND a.object_id = ANY($4::text[]))
           OR (a.object_type = 'project' AND a.object_id = $5::text)
           OR (a.object_type = 'contract' AND a.object_id = ANY($6::text[]))
           OR (a.object_type = 'exposure' AND a.object_id IN
                (SELECT e.id::text FROM exposures e WHERE e.dataset_id = ANY($3::int[])))
           OR (a.object_type IN ('visa', 'drs_object') AND a.change->>'dataset' = ANY($4::text[]))
           OR (a.object_type = 'drs_object' AND a.object_id = ANY($7::text[])))
       ORDER BY a.id`,
      [
        after,
        upTo,
        scope.datasetIds,
        scope.datasetKeys,
        String(scope.projectId),
        scope.contractIds,
        scope.drsObjectIds,
        types ?? null,
      ],
    );
  }

  async latestCheckpoint(manager: EntityManager): Promise<CrateCheckpoint | undefined> {
    const [row] = await manager.query<CrateCheckpoint[]>(
      `SELECT seq::text AS seq, encode(hash, 'hex') AS hash, entry_at, key_id, jws
       FROM audit_checkpoints ORDER BY seq DESC LIMIT 1`,
    );
    return row;
  }
}
