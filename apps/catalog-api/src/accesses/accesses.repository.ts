import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { AccessStatus } from './access.entity';
import { CURRENT_ACCESS_SQL, USABLE_ACCESS_SQL } from './usable-access';

/** Who holds an access: a user or a contact. */
export interface AccessHolder {
  kind: 'user' | 'contact';
  id: number;
}

/** An access recorded by hand (not through the webhook), held by a user or a contact. */
export interface NewHeldAccess {
  datasetId: number;
  holder: AccessHolder;
  status: AccessStatus;
  grantedOn: string | null;
  grantExpiresOn: string | null;
  accessNotes: string;
  createdById: number | null;
  wasGeneratedAutomatically: boolean;
  applicationId: number | null;
}

/**
 * Accesses outside the access-request webhook (which has `RequestAccessesRepository`): expiry,
 * what a person may use, and the holder-less accesses that storage locations list as notes.
 */
@Injectable()
export class AccessesRepository {
  /**
   * Terminates every access whose last day has passed (UTC; expiring today is still valid),
   * noting why; the accesses terminated.
   */
  terminateExpired(manager: EntityManager): Promise<{ id: number; grant_expires_on: string }[]> {
    // Wrapped in a CTE: TypeORM returns [rows, count] for a bare UPDATE ... RETURNING.
    return manager.query<{ id: number; grant_expires_on: string }[]>(
      `WITH expired AS (UPDATE accesses SET status = 'terminated',
           access_notes = concat_ws(E'\\n', NULLIF(access_notes, ''),
             'Automatically terminated: expired on ' || grant_expires_on::text),
           updated_at = now()
         WHERE status <> 'terminated' AND grant_expires_on < (now() AT TIME ZONE 'UTC')::date
         RETURNING id, grant_expires_on::text AS grant_expires_on) SELECT * FROM expired`,
    );
  }

  /**
   * Sorted accessions of the datasets the holder may use (usable-access.ts says which).
   */
  async usableDatasetAccessions(manager: EntityManager, holder: AccessHolder): Promise<string[]> {
    const column = holder.kind === 'user' ? 'user_id' : 'contact_id';
    const rows = await manager.query<{ elu_accession: string }[]>(
      `SELECT DISTINCT d.elu_accession FROM accesses a JOIN datasets d ON d.id = a.dataset_id
       WHERE a.${column} = $1 AND ${USABLE_ACCESS_SQL}
       ORDER BY d.elu_accession`,
      [holder.id],
    );
    return rows.map((row) => row.elu_accession);
  }

  /**
   * Every access of the holder with what decides whether /api/permissions lists it: whether it
   * is current, and whether its dataset has an accession and an exposure (usable-access.ts).
   */
  async explainedAccesses(
    manager: EntityManager,
    holder: AccessHolder,
  ): Promise<
    {
      accession: string | null;
      title: string;
      status: AccessStatus;
      current: boolean;
      exposed: boolean;
    }[]
  > {
    const column = holder.kind === 'user' ? 'user_id' : 'contact_id';
    return manager.query(
      `SELECT d.elu_accession AS accession, d.title, a.status, (${CURRENT_ACCESS_SQL}) AS current,
         EXISTS (SELECT 1 FROM exposures e WHERE e.dataset_id = d.id) AS exposed
       FROM accesses a JOIN datasets d ON d.id = a.dataset_id
       WHERE a.${column} = $1 ORDER BY d.title, a.id`,
      [holder.id],
    );
  }

  /** The datasets' accesses with their notes, oldest first. */
  notesOf(
    manager: EntityManager,
    datasetIds: number[],
  ): Promise<{ id: number; dataset_id: number; access_notes: string }[]> {
    return manager.query<{ id: number; dataset_id: number; access_notes: string }[]>(
      'SELECT id, dataset_id, access_notes FROM accesses WHERE dataset_id = ANY($1::int[]) ORDER BY id',
      [datasetIds],
    );
  }

  /** Inserts an access held by a user or a contact; its id. */
  async insertHeld(manager: EntityManager, access: NewHeldAccess): Promise<number> {
    const rows = await manager.query<{ id: number }[]>(
      `INSERT INTO accesses (dataset_id, user_id, contact_id, status, granted_on, grant_expires_on,
         access_notes, created_by_id, was_generated_automatically, application_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id`,
      [
        access.datasetId,
        access.holder.kind === 'user' ? access.holder.id : null,
        access.holder.kind === 'contact' ? access.holder.id : null,
        access.status,
        access.grantedOn,
        access.grantExpiresOn,
        access.accessNotes,
        access.createdById,
        access.wasGeneratedAutomatically,
        access.applicationId,
      ],
    );
    return rows[0].id;
  }

  /** Attaches the access to every storage location of its dataset. */
  async attachToDatasetStorage(manager: EntityManager, accessId: number): Promise<void> {
    await manager.query(
      `INSERT INTO access_storage_locations (access_id, storage_location_id)
       SELECT a.id, s.id FROM accesses a JOIN storage_locations s ON s.dataset_id = a.dataset_id
       WHERE a.id = $1 ON CONFLICT DO NOTHING`,
      [accessId],
    );
  }

  /** Attaches each access to the storage location at the same position (pairs, one statement). */
  async linkStorageLocations(
    manager: EntityManager,
    accessIds: number[],
    locationIds: number[],
  ): Promise<void> {
    await manager.query(
      `INSERT INTO access_storage_locations (access_id, storage_location_id)
       SELECT * FROM unnest($1::int[], $2::int[]) ON CONFLICT DO NOTHING`,
      [accessIds, locationIds],
    );
  }

  /**
   * Removes the datasets' accesses that are only a note: no holder, not from an access
   * request, attached to no storage location.
   */
  async deleteUnusedNotes(manager: EntityManager, datasetIds: number[]): Promise<void> {
    await manager.query(
      `DELETE FROM accesses a WHERE a.dataset_id = ANY($1::int[]) AND a.user_id IS NULL
       AND a.contact_id IS NULL AND a.application_id IS NULL
       AND NOT EXISTS (SELECT 1 FROM access_storage_locations x WHERE x.access_id = a.id)`,
      [datasetIds],
    );
  }
}
