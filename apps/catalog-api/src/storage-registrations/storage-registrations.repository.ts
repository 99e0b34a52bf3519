import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';

export interface RegisteredDatasetRow {
  id: number;
  project_id: number | null;
  elu_accession: string;
}

export interface StorageWrite {
  datasetId: number;
  platform: string;
  location: string;
  bytes?: number;
  manifestSha256?: string;
  drsUri?: string;
}

/** What a registration did to the copy's row. */
export type StorageWritten = 'created' | 'updated' | 'unchanged';

export interface TransferWrite {
  datasetId: number;
  partnerId: number;
  details: string;
  date: string;
  importId: string;
}

/**
 * The statements of a storage registration. Each write is an `INSERT … ON CONFLICT` on the
 * constraint that makes it happen once (dataset title, storage (dataset, platform, the
 * location's digest), transfer import id), so concurrent or repeated registrations add nothing
 * twice; each returns whether it added the row (the storage row: or updated its size and
 * checksum).
 */
@Injectable()
export class StorageRegistrationsRepository {
  async projectIdByAcronym(m: EntityManager, acronym: string): Promise<number | undefined> {
    const rows = await m.query<{ id: number }[]>('SELECT id FROM projects WHERE acronym = $1', [
      acronym,
    ]);
    return rows[0]?.id;
  }

  /** A partner by exact name, else by acronym. */
  async partnerIdByNameOrAcronym(m: EntityManager, ref: string): Promise<number | undefined> {
    const rows = await m.query<{ id: number }[]>(
      `SELECT id FROM partners WHERE name = $1 OR acronym = $1
       ORDER BY (name = $1) DESC, id LIMIT 1`,
      [ref],
    );
    return rows[0]?.id;
  }

  async datasetByAccession(
    m: EntityManager,
    accession: string,
  ): Promise<RegisteredDatasetRow | undefined> {
    const rows = await m.query<RegisteredDatasetRow[]>(
      'SELECT id, project_id, elu_accession FROM datasets WHERE elu_accession = $1',
      [accession],
    );
    return rows[0];
  }

  /** The dataset with this title, created in the project when there is none. */
  async datasetByTitleOrCreate(
    m: EntityManager,
    title: string,
    projectId: number,
  ): Promise<{ row: RegisteredDatasetRow; created: boolean }> {
    const inserted = await m.query<RegisteredDatasetRow[]>(
      `INSERT INTO datasets (title, project_id) VALUES ($1, $2)
       ON CONFLICT (title) DO NOTHING RETURNING id, project_id, elu_accession`,
      [title, projectId],
    );
    if (inserted.length > 0) return { row: inserted[0], created: true };
    const found = await m.query<RegisteredDatasetRow[]>(
      'SELECT id, project_id, elu_accession FROM datasets WHERE title = $1',
      [title],
    );
    return { row: found[0], created: false };
  }

  /**
   * The copy's row, added when missing. Its size and manifest checksum are set when given and
   * differ from the stored ones (a re-import of a removed copy registers new values); absent
   * ones leave the stored values alone, and an unchanged row is not written at all, so a repeated
   * registration changes nothing, not even the catalog's version.
   */
  async upsertStorage(m: EntityManager, s: StorageWrite): Promise<StorageWritten> {
    const rows = await m.query<{ created: boolean }[]>(
      `INSERT INTO storage_locations AS sl (dataset_id, platform, location, category, byte_size,
         manifest_sha256, drs_uri)
       VALUES ($1, $2, $3, 'master', $4::bigint, $5, $6)
       ON CONFLICT (dataset_id, platform, storage_location_digest(location)) DO UPDATE
         SET byte_size = COALESCE(EXCLUDED.byte_size, sl.byte_size),
           manifest_sha256 = COALESCE(EXCLUDED.manifest_sha256, sl.manifest_sha256),
           drs_uri = COALESCE(EXCLUDED.drs_uri, sl.drs_uri)
         WHERE (sl.byte_size, sl.manifest_sha256, sl.drs_uri) IS DISTINCT FROM
           (COALESCE(EXCLUDED.byte_size, sl.byte_size),
            COALESCE(EXCLUDED.manifest_sha256, sl.manifest_sha256),
            COALESCE(EXCLUDED.drs_uri, sl.drs_uri))
       RETURNING (xmax = 0) AS created`,
      [
        s.datasetId,
        s.platform,
        s.location,
        s.bytes ?? null,
        s.manifestSha256 ?? null,
        s.drsUri ?? null,
      ],
    );
    if (rows.length === 0) return 'unchanged';
    return rows[0].created ? 'created' : 'updated';
  }

  async addTransfer(m: EntityManager, t: TransferWrite): Promise<boolean> {
    const rows = await m.query<{ id: number }[]>(
      `INSERT INTO transfers (dataset_id, partner_id, transfer_details, transfer_date, import_id)
       VALUES ($1, $2, $3, $4::date, $5)
       ON CONFLICT (import_id) WHERE import_id IS NOT NULL DO NOTHING RETURNING id`,
      [t.datasetId, t.partnerId, t.details, t.date, t.importId],
    );
    return rows.length > 0;
  }
}
