import type { Job, Queue } from 'bullmq';
import { readProvenanceHead } from '../storage/provenance';
import { PROVENANCE_DIR, PROVENANCE_FILE, SUBMISSION_FILE } from '../storage/storage-layout';
import type { StorageSystem } from '../storage/storage-system';
import { ImportRecord, recordFromJob } from './import-record';
import { NO_PROGRESS } from './import-progress';
import { ImportJobData, ImportJobName, ImportJobResult, ImportKind } from './import.queue';

export type ImportJob = Job<ImportJobData, ImportJobResult | undefined>;

/** The dataset or submission import kept under an id, with the state it was read in. */
export async function findImportJob(
  queue: Queue,
  id: string,
): Promise<{ job: ImportJob; state: string } | null> {
  // State first, then the job: a job read after its state is at least as new as that state,
  // so a finished state never comes with the data of a still-running job.
  const state = await queue.getJobState(id);
  if (state === 'unknown') return null;
  const job = (await queue.getJob(id)) as ImportJob | undefined;
  if (!job || (job.name !== ImportJobName.Dataset && job.name !== ImportJobName.Submission))
    return null;
  return { job, state };
}

/** The record of something published, from its job when kept, else rebuilt from storage. */
export async function importedRecord(
  queue: Queue,
  storage: StorageSystem,
  id: string,
  path: string,
): Promise<ImportRecord> {
  const found = await findImportJob(queue, id);
  if (found?.state === 'completed') return recordFromJob(found.job, found.state);
  return recordFromStorage(storage, id, path);
}

/** Storage is the truth of what was imported: the record its provenance (or submission) tells. */
async function recordFromStorage(
  storage: StorageSystem,
  id: string,
  path: string,
): Promise<ImportRecord> {
  const [source, kind, ...rest] = id.split('-');
  const base = {
    id,
    kind: kind as ImportKind,
    source,
    key: rest.join('-'),
    state: 'imported' as const,
    attempts: 0,
    path,
    error: null,
    // No job to say how it went: registrations are told on import jobs.
    catalog: null,
  };
  if (kind === ImportJobName.Dataset) {
    const provenance = await readProvenanceHead(
      storage,
      `${path}/${PROVENANCE_DIR}/${PROVENANCE_FILE}`,
    );
    const totals = provenance?.totals ?? { files: 0, bytes: 0 };
    return {
      ...base,
      attempts: provenance?.import.attempt ?? 0,
      progress: {
        files_done: totals.files,
        files_total: totals.files,
        bytes_done: totals.bytes,
        bytes_total: totals.bytes,
      },
      created_at:
        provenance?.import.queued_at ?? provenance?.import.started_at ?? new Date(0).toISOString(),
      started_at: provenance?.import.started_at ?? null,
      finished_at: provenance?.import.staged_at ?? null,
    };
  }
  const document = await storage.readObject(`${path}/${SUBMISSION_FILE}`);
  let fetchedAt: string | null = null;
  try {
    fetchedAt =
      (JSON.parse(document?.toString('utf8') ?? '{}') as { fetched_at?: string }).fetched_at ??
      null;
  } catch {
    fetchedAt = null;
  }
  return {
    ...base,
    progress: { ...NO_PROGRESS },
    created_at: fetchedAt ?? new Date(0).toISOString(),
    started_at: fetchedAt,
    finished_at: fetchedAt,
  };
}
