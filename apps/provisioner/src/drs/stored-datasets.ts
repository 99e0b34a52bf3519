import { Inject, Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { mapLimit } from '../common/map-limit';
import { ImportRecordsRepository } from '../imports/import-records.repository';
import { isSafeSegment } from '../sources/safe-segment';
import { DRS_SETTINGS, type DrsSettings } from '../config/drs-settings';
import { parseProvenance, readProvenanceHead, type Provenance } from '../storage/provenance';
import { datasetCommitObject } from '../storage/storage-layout';
import { STORAGE_SYSTEM } from '../storage/storage.module';
import type { StorageSystem, StoredEncryption } from '../storage/storage-system';
import { DrsError } from './drs-errors';
import { datasetDrsId, datasetPathOf, type DatasetRef, filePathDigest } from './drs-ids';

/** One file of a published dataset, as its provenance records it. */
export interface StoredFile {
  id: string;
  /** The path inside the dataset (as in the manifest). */
  path: string;
  size: number;
  sha256: string;
  md5?: string;
}

/** A published dataset as DRS serves it: its files and its compound-object manifest. */
export interface StoredDataset {
  id: string;
  ref: DatasetRef;
  /** The storage path of the dataset (…/data/raw/<dataset_id>). */
  path: string;
  title: string;
  importId: string;
  /** When the import staged the copy (the content's creation), RFC 3339. */
  createdTime: string;
  files: StoredFile[];
  /** Archive mode: its files are Crypt4GH bodies, headers apart (the provenance says where). */
  encryption?: StoredEncryption;
  byDigest: Map<string, StoredFile>;
  totalBytes: number;
  /** The compound object's manifest (JSON listing every file's DRS id) and its SHA-256. */
  manifest: Buffer;
  manifestSha256: string;
}

/** Datasets kept parsed per process; a provenance is immutable once published. */
const MAX_CACHED_DATASETS = 512;
/** Parallel listings and provenance heads when counting everything (service-info). */
const WALK_CONCURRENCY = 16;

/** A dataset's contribution to service-info's counts (kept per dataset, a few numbers each). */
interface DatasetTotals {
  objects: number;
  bytes: number;
}

/**
 * The published datasets, read from storage: a dataset exists for DRS when its provenance (the
 * object written last, so only a complete copy has it) does, and its files are exactly those
 * the provenance lists, so nothing else in storage (staging, `.provisioner/`, a file added by
 * hand) has an id. Parsed datasets are kept (bounded, least recently used out first); the
 * catalog accession of each comes from its import record once it is registered.
 */
@Injectable()
export class StoredDatasets {
  private readonly cache = new Map<string, StoredDataset>();
  /** Files held by the cached datasets: at most DRS_MAX_DATASET_FILES (beyond the newest). */
  private cachedFiles = 0;
  /** Per dataset id, what it adds to service-info (null: too large to serve). */
  private readonly totalsOf = new Map<string, DatasetTotals | null>();
  private readonly accessions = new Map<string, string>();
  private readonly reading = new Map<string, Promise<StoredDataset | undefined>>();
  private lastRead: Promise<unknown> = Promise.resolve();
  private readonly maxFiles: number;

  constructor(
    @Inject(STORAGE_SYSTEM) private readonly storage: StorageSystem,
    private readonly records: ImportRecordsRepository,
    @Inject(DRS_SETTINGS) settings: DrsSettings,
  ) {
    this.maxFiles = settings.maxDatasetFiles;
  }

  /**
   * The dataset, or undefined when no complete copy is published under that name. Its
   * provenance's head is read first: a dataset of more than DRS_MAX_DATASET_FILES files is
   * refused (501 `dataset_too_large`) before its list of files is read, so no request, however
   * large the datasets in storage, makes this process hold more than that many files' worth.
   */
  async dataset(ref: DatasetRef): Promise<StoredDataset | undefined> {
    const id = datasetDrsId(ref);
    const cached = this.cache.get(id);
    if (cached !== undefined) {
      this.cache.delete(id);
      this.cache.set(id, cached);
      return cached;
    }
    // One dataset is read at a time, and a dataset asked for again while it is being read
    // waits for that read: concurrent requests for large datasets cannot stack their peaks.
    const reading = this.reading.get(id);
    if (reading) return reading;
    const read = this.lastRead.then(() => this.read(id, ref));
    this.lastRead = read.catch(() => undefined);
    this.reading.set(id, read);
    try {
      return await read;
    } finally {
      this.reading.delete(id);
    }
  }

  /**
   * Whether a complete copy is published under `ref`: a dataset already parsed is, else its
   * provenance's head is read (one small read, never the list of files), so that many can be
   * asked at once where only one dataset is read whole at a time.
   */
  async published(ref: DatasetRef): Promise<boolean> {
    if (this.cache.has(datasetDrsId(ref))) return true;
    return (
      (await readProvenanceHead(this.storage, datasetCommitObject(datasetPathOf(ref)))) !== null
    );
  }

  private async read(id: string, ref: DatasetRef): Promise<StoredDataset | undefined> {
    const path = datasetPathOf(ref);
    const head = await readProvenanceHead(this.storage, datasetCommitObject(path));
    // An absent dataset is not remembered: it may be published a moment later.
    if (head === null) return undefined;
    if (head.totals.files > this.maxFiles) {
      this.totalsOf.set(id, null);
      throw new DrsError(
        501,
        'dataset_too_large',
        `The dataset has ${head.totals.files} files; this service serves datasets of at most ${this.maxFiles} (DRS_MAX_DATASET_FILES)`,
        { files: head.totals.files, max: this.maxFiles },
      );
    }
    const provenance = parseProvenance(await this.storage.readObject(datasetCommitObject(path)));
    if (provenance === null) return undefined;
    const dataset = datasetOf(id, ref, path, provenance);
    this.totalsOf.set(id, {
      objects: dataset.files.length + 1,
      bytes: dataset.totalBytes + dataset.manifest.length,
    });
    this.keep(dataset);
    return dataset;
  }

  /** Caches a dataset, least recently used out first past either bound. */
  private keep(dataset: StoredDataset): void {
    this.cache.set(dataset.id, dataset);
    this.cachedFiles += dataset.files.length;
    while (
      this.cache.size > MAX_CACHED_DATASETS ||
      (this.cachedFiles > this.maxFiles && this.cache.size > 1)
    ) {
      const [oldestId, oldest] = this.cache.entries().next().value as [string, StoredDataset];
      this.cache.delete(oldestId);
      this.cachedFiles -= oldest.files.length;
    }
  }

  /**
   * The catalog accession of each dataset that is registered, by dataset id, in one round trip
   * to the import records (a registered dataset keeps its accession, so it is remembered).
   */
  async accessionsOf(datasets: StoredDataset[]): Promise<Map<string, string>> {
    const missing = datasets.filter((d) => !this.accessions.has(d.id));
    if (missing.length > 0) {
      const found = await this.records.catalogAccessions([
        ...new Set(missing.map((d) => d.importId)),
      ]);
      for (const dataset of missing) {
        const accession = found.get(dataset.importId);
        if (accession !== undefined) this.accessions.set(dataset.id, accession);
      }
    }
    const answer = new Map<string, string>();
    for (const dataset of datasets) {
      const accession = this.accessions.get(dataset.id);
      if (accession !== undefined) answer.set(dataset.id, accession);
    }
    return answer;
  }

  /** Every published dataset's object count (its files and its manifest) and bytes. */
  async totals(): Promise<{ objects: number; bytes: number }> {
    const refs: DatasetRef[] = [];
    for (const project of (await this.storage.list('projects')).filter(isSafeSegment)) {
      const submissions = (await this.storage.list(`projects/${project}`)).filter(isSafeSegment);
      const listed = await mapLimit(submissions, WALK_CONCURRENCY, async (submission) =>
        (await this.storage.list(`projects/${project}/${submission}/data/raw`))
          .filter(isSafeSegment)
          .map((datasetId) => ({ project, submission, datasetId })),
      );
      for (const found of listed) for (const ref of found) refs.push(ref);
    }
    // Each dataset is read once (its counts are remembered), one at a time (see dataset()).
    const counted = await mapLimit(refs, WALK_CONCURRENCY, (ref) => this.totalsFor(ref));
    let objects = 0;
    let bytes = 0;
    for (const totals of counted) {
      if (!totals) continue;
      objects += totals.objects;
      bytes += totals.bytes;
    }
    return { objects, bytes };
  }

  /** What a dataset adds to service-info: nothing when absent or too large to serve. */
  private async totalsFor(ref: DatasetRef): Promise<DatasetTotals | null> {
    const known = this.totalsOf.get(datasetDrsId(ref));
    if (known !== undefined) return known;
    try {
      await this.dataset(ref);
    } catch (error) {
      if (!(error instanceof DrsError)) throw error;
    }
    return this.totalsOf.get(datasetDrsId(ref)) ?? null;
  }
}

function datasetOf(
  id: string,
  ref: DatasetRef,
  path: string,
  provenance: Provenance,
): StoredDataset {
  const files = provenance.files.map((file) => ({
    id: `${id}~${filePathDigest(file.path)}`,
    path: file.path,
    size: file.size,
    sha256: file.sha256,
    ...(file.md5 !== undefined ? { md5: file.md5 } : {}),
  }));
  // The compound object's manifest (DRS "Working With Compound Objects"): the dataset and the
  // DRS id of each constituent, in the provenance's order, serialised the same way every time.
  const manifest = Buffer.from(
    JSON.stringify({
      format: 'drs-dataset-manifest/1',
      dataset: { id, dataset_id: ref.datasetId, title: provenance.dataset.title },
      objects: files.map((file) => ({
        id: file.id,
        path: file.path,
        size: file.size,
        sha256: file.sha256,
      })),
    }),
  );
  return {
    id,
    ref,
    path,
    title: provenance.dataset.title,
    importId: provenance.import.id,
    createdTime: provenance.import.staged_at,
    files,
    ...(provenance.encryption ? { encryption: provenance.encryption } : {}),
    byDigest: new Map(files.map((file) => [file.id.slice(-20), file])),
    totalBytes: provenance.totals.bytes,
    manifest,
    manifestSha256: createHash('sha256').update(manifest).digest('hex'),
  };
}
