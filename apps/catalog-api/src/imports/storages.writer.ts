import type { ImportContext } from './import-context';
import type { DatasetInput } from './import-shapes';

type StorageInput = NonNullable<DatasetInput['storages']>[number];

/**
 * Replaces a dataset's storage locations. Their `accesses` are the notes of access records
 * attached to the location: an existing access of the dataset with the same note is attached
 * again (so people's accesses keep their links), a new note becomes an access record without a
 * holder, and holder-less records that no location uses any more are removed.
 */
export async function replaceStorages(
  ctx: ImportContext,
  datasetId: number,
  storages: StorageInput[],
): Promise<void> {
  const m = ctx.manager;
  const accesses = await m.query<{ id: number; access_notes: string }[]>(
    'SELECT id, access_notes FROM accesses WHERE dataset_id = $1 ORDER BY id',
    [datasetId],
  );
  await m.query('DELETE FROM storage_locations WHERE dataset_id = $1', [datasetId]);
  for (const s of storages) {
    const rows = await m.query<{ id: number }[]>(
      `INSERT INTO storage_locations (dataset_id, platform, category, location)
       VALUES ($1, $2, $3, $4) RETURNING id`,
      [datasetId, s.platform, s.category ?? 'master', s.location ?? null],
    );
    const locationId = rows[0].id;
    for (const note of s.accesses ?? []) {
      let accessId = accesses.find((a) => a.access_notes === note)?.id;
      if (accessId === undefined) {
        const created = await m.query<{ id: number }[]>(
          'INSERT INTO accesses (dataset_id, access_notes) VALUES ($1, $2) RETURNING id',
          [datasetId, note],
        );
        accessId = created[0].id;
        accesses.push({ id: accessId, access_notes: note });
      }
      await m.query(
        `INSERT INTO access_storage_locations (access_id, storage_location_id) VALUES ($1, $2)
         ON CONFLICT DO NOTHING`,
        [accessId, locationId],
      );
    }
  }
  await m.query(
    `DELETE FROM accesses a WHERE a.dataset_id = $1 AND a.user_id IS NULL AND a.contact_id IS NULL
       AND a.application_id IS NULL
       AND NOT EXISTS (SELECT 1 FROM access_storage_locations x WHERE x.access_id = a.id)`,
    [datasetId],
  );
}
