import { Inject, Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { mapLimit } from '../common/map-limit';
import { ImportRecordsRepository } from '../imports/import-records.repository';
import { isSafeSegment } from '../sources/safe-segment';
import { parseProvenance, type Provenance } from '../storage/provenance';
import { datasetCommitObject } from '../storage/storage-layout';
import { STORAGE_SYSTEM } from '../storage/storage.module';
import type { StorageSystem } from '../storage/storage-system';
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
  byDigest: Map<string, StoredFile>;
  totalBytes: number;
  /** The compound object's manifest (JSON listing every file's DRS id) and its SHA-256. */
  manifest: Buffer;
  manifestSha256: string;
}

/** Datasets kept parsed per process; a provenance is immutable once published. */
const MAX_CACHED_DATASETS = 512;
/** Parallel listings and reads when counting everything (service-info). */
const WALK_CONCURRENCY = 16;

/**
 * The published datasets, read from storage: a dataset exists for DRS when its provenance (the
 * object written last, so only a complete copy has it) does, and its files are exactly those
 * the provenance lists, so nothing else in storage (staging, `.provisioner/`, a file added by
 * hand) has an id. Parsed datasets are kept (bounded, least recently used out first); the
 * catalog accession of each comes from its import record once it is registered.
 */
@Injectable()
export class StoredDatasets {
  private readonly cache = new Map<string, StoredDataset | null>();
  private readonly accessions = new Map<string, string>();

  constructor(
    @Inject(STORAGE_SYSTEM) private readonly storage: StorageSystem,
    private readonly records: ImportRecordsRepository,
  ) {}

  /** The dataset, or undefined when no complete copy is published under that name. */
  async dataset(ref: DatasetRef): Promise<StoredDataset | undefined> {
    const id = datasetDrsId(ref);
    const cached = this.cache.get(id);
    if (cached !== undefined) {
      this.cache.delete(id);
      this.cache.set(id, cached);
      return cached ?? undefined;
    }
    const path = datasetPathOf(ref);
    const provenance = parseProvenance(await this.storage.readObject(datasetCommitObject(path)));
    // An absent dataset is not remembered: it may be published a moment later.
    if (provenance === null) return undefined;
    const dataset = datasetOf(id, ref, path, provenance);
    this.cache.set(id, dataset);
    if (this.cache.size > MAX_CACHED_DATASETS) {
      this.cache.delete(this.cache.keys().next().value as string);
    }
    return dataset;
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
    const datasets = await mapLimit(refs, WALK_CONCURRENCY, (ref) => this.dataset(ref));
    let objects = 0;
    let bytes = 0;
    for (const dataset of datasets) {
      if (dataset === undefined) continue;
      objects += dataset.files.length + 1;
      bytes += dataset.totalBytes + dataset.manifest.length;
    }
    return { objects, bytes };
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
    byDigest: new Map(files.map((file) => [file.id.slice(-20), file])),
    totalBytes: provenance.totals.bytes,
    manifest,
    manifestSha256: createHash('sha256').update(manifest).digest('hex'),
  };
}
