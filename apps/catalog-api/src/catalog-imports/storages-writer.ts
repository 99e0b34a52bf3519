import type { ImportContext } from './import-context';
import type { DatasetInput } from './import-shapes';

type StorageInput = NonNullable<DatasetInput['storages']>[number];

/** A dataset whose storage locations the import replaces. */
export interface StorageTarget {
  datasetId: number;
  storages: StorageInput[];
}

/**
 * One entry per (platform, location), as the table's unique index requires: a document that
 * lists a copy twice gets it once, with the accesses of both.
 */
function distinctStorages(storages: StorageInput[]): StorageInput[] {
  const byKey = new Map<string, StorageInput>();
  for (const s of storages) {
    const key = `${s.platform}\u0000${s.location ?? ''}`;
    const seen = byKey.get(key);
    if (seen === undefined) byKey.set(key, { ...s, accesses: [...(s.accesses ?? [])] });
    else seen.accesses = [...new Set([...(seen.accesses ?? []), ...(s.accesses ?? [])])];
  }
  return [...byKey.values()];
}

/** A copy as the table's unique index sees it: (dataset, platform, location or ''). */
const copyKey = (datasetId: number, platform: string, location: string | null) =>
  `${datasetId}\u0000${platform}\u0000${location ?? ''}`;

/**
 * Replaces the storage locations of the given datasets, in a fixed number of statements. Their
 * `accesses` are the notes of access records attached to the location: an existing access of
 * the dataset with the same note is attached again (so people's accesses keep their links), a
 * new note becomes an access record without a holder, and holder-less records that no location
 * uses any more are removed.
 */
export async function replaceStorages(ctx: ImportContext, targets: StorageTarget[]): Promise<void> {
  if (targets.length === 0) return;
  const { manager: m, repos } = ctx;
  const datasetIds = targets.map((t) => t.datasetId);
  const existing = await repos.accesses.notesOf(m, datasetIds);
  const noteKey = (datasetId: number, note: string) => `${datasetId}\u0000${note}`;
  const accessOf = new Map<string, number>();
  for (const a of existing) {
    const key = noteKey(a.dataset_id, a.access_notes);
    if (!accessOf.has(key)) accessOf.set(key, a.id);
  }
  // A document has no sizes or checksums: a copy it lists again keeps those the provisioner
  // registered (docs/decisions/dcat-distribution-size-and-checksum.md).
  const registered = new Map(
    (await repos.datasets.deleteStorageLocations(m, datasetIds)).map((r) => [
      copyKey(r.dataset_id, r.platform, r.location),
      r,
    ]),
  );
  const locations = targets.flatMap((t) =>
    distinctStorages(t.storages).map((s) => ({ datasetId: t.datasetId, s })),
  );
  const locationIds = await repos.rows.insert(
    m,
    'storage_locations',
    locations.map(({ datasetId, s }) => {
      const kept = registered.get(copyKey(datasetId, s.platform ?? '', s.location ?? null));
      return {
        dataset_id: datasetId,
        platform: s.platform,
        category: s.category ?? 'master',
        location: s.location ?? null,
        byte_size: kept?.byte_size ?? undefined,
        manifest_sha256: kept?.manifest_sha256 ?? undefined,
        drs_uri: kept?.drs_uri ?? undefined,
      };
    }),
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
  const freshIds = await repos.rows.insert(
    m,
    'accesses',
    fresh.map((u) => ({ dataset_id: u.datasetId, access_notes: u.note })),
  );
  fresh.forEach((u, i) => accessOf.set(u.key, freshIds[i]));
  if (uses.length > 0) {
    await repos.accesses.linkStorageLocations(
      m,
      uses.map((u) => accessOf.get(u.key) as number),
      uses.map((u) => u.location),
    );
  }
  await repos.accesses.deleteUnusedNotes(m, datasetIds);
}
