import type { ImportContext } from './import-context';
import type { DatasetInput } from './import-shapes';
import { insertRows } from './row-writer';

type StorageInput = NonNullable<DatasetInput['storages']>[number];

/** A dataset whose storage locations the import replaces. */
export interface StorageTarget {
  datasetId: number;
  storages: StorageInput[];
}

/**
 * Replaces the storage locations of the given datasets, in a fixed number of statements. Their
 * `accesses` are the notes of access records attached to the location: an existing access of
 * the dataset with the same note is attached again (so people's accesses keep their links), a
 * new note becomes an access record without a holder, and holder-less records that no location
 * uses any more are removed.
 */
export async function replaceStorages(ctx: ImportContext, targets: StorageTarget[]): Promise<void> {
  if (targets.length === 0) return;
  const m = ctx.manager;
  const datasetIds = targets.map((t) => t.datasetId);
  const existing = await m.query<{ id: number; dataset_id: number; access_notes: string }[]>(
    'SELECT id, dataset_id, access_notes FROM accesses WHERE dataset_id = ANY($1::int[]) ORDER BY id',
    [datasetIds],
  );
  const noteKey = (datasetId: number, note: string) => `${datasetId}\u0000${note}`;
  const accessOf = new Map<string, number>();
  for (const a of existing) {
    const key = noteKey(a.dataset_id, a.access_notes);
    if (!accessOf.has(key)) accessOf.set(key, a.id);
  }
  await m.query('DELETE FROM storage_locations WHERE dataset_id = ANY($1::int[])', [datasetIds]);
  const locations = targets.flatMap((t) => t.storages.map((s) => ({ datasetId: t.datasetId, s })));
  const locationIds = await insertRows(
    ctx,
    'storage_locations',
    locations.map(({ datasetId, s }) => ({
      dataset_id: datasetId,
      platform: s.platform,
      category: s.category ?? 'master',
      location: s.location ?? null,
    })),
  );

  const uses = locations.flatMap(({ datasetId, s }, k) =>
    (s.accesses ?? []).map((note) => ({
      key: noteKey(datasetId, note),
      datasetId,
      note,
      location: locationIds[k],
    })),
  );
  const fresh = [
    ...new Map(uses.filter((u) => !accessOf.has(u.key)).map((u) => [u.key, u])).values(),
  ];
  const freshIds = await insertRows(
    ctx,
    'accesses',
    fresh.map((u) => ({ dataset_id: u.datasetId, access_notes: u.note })),
  );
  fresh.forEach((u, i) => accessOf.set(u.key, freshIds[i]));
  if (uses.length > 0) {
    await m.query(
      `INSERT INTO access_storage_locations (access_id, storage_location_id)
       SELECT * FROM unnest($1::int[], $2::int[]) ON CONFLICT DO NOTHING`,
      [uses.map((u) => accessOf.get(u.key)), uses.map((u) => u.location)],
    );
  }
  await m.query(
    `DELETE FROM accesses a WHERE a.dataset_id = ANY($1::int[]) AND a.user_id IS NULL
       AND a.contact_id IS NULL AND a.application_id IS NULL
       AND NOT EXISTS (SELECT 1 FROM access_storage_locations x WHERE x.access_id = a.id)`,
    [datasetIds],
  );
}
