import type { Queue } from 'bullmq';
import { mapLimit } from '../common/map-limit';
import { findImportJob } from '../imports/imported-record';
import type { CatalogRegistrationState } from '../imports/import.queue';
import { readProvenanceHead } from '../storage/provenance';
import { datasetCommitObject, rawPath } from '../storage/storage-layout';
import type { StorageSystem } from '../storage/storage-system';
import { CatalogClient, CatalogRefusedError, CatalogUnavailableError } from '../catalog-client/catalog.client';
import { describeRegistration, RegistrationUnusableError } from './registration-description';
import { queueRegistration } from './storage-registration.producer';
import { StorageRegistrationJobData, storageRegistrationJobId } from './storage-registration.queue';

/**
 * What `provisioner reregister` did with one published dataset:
 * - `added`: the catalog lacked something of it (the dataset, its storage row, its transfer);
 * - `unchanged`: the catalog had all of it already;
 * - `refused`: the catalog said no (`reason`: unknown_project, …), as it would the outbox;
 * - `unavailable`: the catalog could not answer (`reason`: the error); run the command again;
 * - `no_provenance`: the dataset holds no provenance: nothing to register it from;
 * - `would_register`: --dry-run, nothing sent.
 */
export type ReregistrationOutcome =
  'added' | 'unchanged' | 'refused' | 'unavailable' | 'no_provenance' | 'would_register';

/**
 * What became of the import record's registration (the queue's, `GET /imports/<id>`):
 * - `in_line`: it names the accession the catalog answered;
 * - `queued`: it did not (pending, refused, gave up, another accession): its registration job
 *   was queued again, and a worker writes the answer on the record;
 * - `running`: its registration job has not finished yet; it writes the record itself;
 * - `none`: the queue keeps no record of that import (a queue lost or emptied).
 */
export type RecordOutcome = 'in_line' | 'queued' | 'running' | 'none';

export interface ReregisteredDataset {
  path: string;
  import_id: string | null;
  outcome: ReregistrationOutcome;
  accession: string | null;
  reason: string | null;
  record: RecordOutcome | null;
}

/** The import record and registration job the queue keeps of an import. */
export interface KeptRegistration {
  /** The record's registration; null when the queue keeps no import job of that id. */
  record: CatalogRegistrationState | null | undefined;
  /** The registration job's publishing day: the transfer date it registered with. */
  publishedOn: string | null;
  /** The registration job is waiting, delayed or running. */
  unfinished: boolean;
}

/** The queue's side: what it keeps of an import, and queuing its registration again. */
export interface RegistrationQueue {
  kept(importId: string): Promise<KeptRegistration>;
  requeue(data: StorageRegistrationJobData): Promise<void>;
}

const FINISHED = new Set(['completed', 'failed', 'unknown']);

/** The RegistrationQueue of the imports queue and the registration outbox (BullMQ queues). */
export function registrationQueue(
  imports: Queue,
  registrations: Queue,
  settings: Parameters<typeof queueRegistration>[1],
): RegistrationQueue {
  return {
    async kept(importId) {
      const found = await findImportJob(imports, importId);
      const jobId = storageRegistrationJobId(importId);
      const state = await registrations.getJobState(jobId);
      const job = state === 'unknown' ? undefined : await registrations.getJob(jobId);
      const data = job?.data as Partial<StorageRegistrationJobData> | undefined;
      return {
        record: found === null ? null : (found.job.data.catalog ?? undefined),
        publishedOn: data?.published_on ?? null,
        unfinished: !FINISHED.has(state),
      };
    },
    requeue: (data) => queueRegistration(registrations, settings, data),
  };
}

export interface ReregistrationOptions {
  storage: StorageSystem;
  catalog: CatalogClient;
  /** The storage's platform name in the catalog (CATALOG_STORAGE_PLATFORM). */
  platform: string;
  /** This provisioner's DRS host, while DRS is on. */
  drsHost?: string;
  /** Absent: import records are left alone (no queue to read). */
  queue?: RegistrationQueue;
  dryRun?: boolean;
  /** Told of each dataset as it is done. */
  onDataset?: (dataset: ReregisteredDataset) => void;
}

/** Registrations sent at once: each also hashes its stored manifest. */
const AT_ONCE = 4;

/** Every published dataset's path (projects/<p>/<submission>/data/raw/<dataset>), in order. */
export async function publishedDatasetPaths(storage: StorageSystem): Promise<string[]> {
  const paths: string[] = [];
  for (const project of (await storage.list('projects')).sort())
    for (const ref of (await storage.list(`projects/${project}`)).sort()) {
      const raw = rawPath(project, ref);
      for (const id of (await storage.list(raw)).sort()) paths.push(`${raw}/${id}`);
    }
  return paths;
}

/**
 * Registers every published dataset in the catalog again, from what storage holds (its
 * provenance, stored manifest and submission.json: the registration the outbox sends, read the
 * same way), straight to the catalog's `POST /api/registrations`. Idempotent, as that route is:
 * what the catalog has is left as it is. For after a restore of the catalog from a backup
 * older than storage, or a queue that lost registrations. Where the queue keeps an import record
 * whose registration says otherwise, the registration job is queued again, so the record tells
 * what the catalog holds.
 */
export async function reregisterPublished(
  options: ReregistrationOptions,
): Promise<ReregisteredDataset[]> {
  const paths = await publishedDatasetPaths(options.storage);
  return mapLimit(paths, AT_ONCE, async (path) => {
    const done = await reregisterOne(options, path);
    options.onDataset?.(done);
    return done;
  });
}

async function reregisterOne(
  { storage, catalog, platform, drsHost, queue, dryRun }: ReregistrationOptions,
  path: string,
): Promise<ReregisteredDataset> {
  const result = (
    outcome: ReregistrationOutcome,
    more: Partial<ReregisteredDataset> = {},
  ): ReregisteredDataset => ({
    path,
    import_id: null,
    outcome,
    accession: null,
    reason: null,
    record: null,
    ...more,
  });
  const head = await readProvenanceHead(storage, datasetCommitObject(path));
  if (head === null) return result('no_provenance');
  const importId = head.import.id;
  const kept = queue ? await queue.kept(importId) : null;
  // The day it was first registered with, kept by its job; else the day its copy was staged,
  // moments before it was published.
  const publishedOn = kept?.publishedOn ?? head.import.staged_at.slice(0, 10);
  let registration;
  try {
    registration = await describeRegistration(
      storage,
      importId,
      path,
      platform,
      publishedOn,
      drsHost,
    );
  } catch (error) {
    if (error instanceof RegistrationUnusableError)
      return result('no_provenance', { import_id: importId });
    throw error;
  }
  if (dryRun) return result('would_register', { import_id: importId });
  let answer;
  try {
    answer = await catalog.register(registration);
  } catch (error) {
    if (error instanceof CatalogRefusedError)
      return result('refused', { import_id: importId, reason: error.reason });
    if (error instanceof CatalogUnavailableError)
      return result('unavailable', { import_id: importId, reason: error.message });
    throw error;
  }
  let record: RecordOutcome | null = null;
  if (queue && kept) {
    if (kept.record === null) record = 'none';
    else if (kept.record?.state === 'registered' && kept.record.accession === answer.accession)
      record = 'in_line';
    else if (kept.unfinished) record = 'running';
    else {
      await queue.requeue({ import_id: importId, path, published_on: publishedOn });
      record = 'queued';
    }
  }
  return result(answer.changed ? 'added' : 'unchanged', {
    import_id: importId,
    accession: answer.accession,
    record,
  });
}
