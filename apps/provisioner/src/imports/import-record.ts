import type { Job } from 'bullmq';
import { ImportProgress, NO_PROGRESS } from './import-progress';
import {
  CatalogRegistrationState,
  ImportJobData,
  ImportJobResult,
  ImportKind,
} from './import.queue';
import { MAX_KEPT_PROBLEMS } from '../sources/source-system';
import { boundedDetails, clip, MESSAGE_CHARS } from './record-bounds';

/** The states of an import record: the DTO's filter, its OpenAPI enum and the repositories use this list. */
export const IMPORT_STATES = ['queued', 'running', 'imported', 'failed', 'rejected'] as const;
export type ImportState = (typeof IMPORT_STATES)[number];

/**
 * What a record is made of: the fields of an import job, from a BullMQ Job or straight from a
 * row of the job table of BullMQ's PostgreSQL backend.
 */
export type ImportJobFields = Pick<
  Job<ImportJobData, ImportJobResult | undefined>,
  | 'id'
  | 'name'
  | 'data'
  | 'progress'
  | 'returnvalue'
  | 'timestamp'
  | 'processedOn'
  | 'finishedOn'
  | 'attemptsMade'
  | 'attemptsStarted'
  | 'failedReason'
>;

/** The import record of the contract. */
export interface ImportRecord {
  id: string;
  kind: ImportKind;
  source: string;
  key: string;
  state: ImportState;
  attempts: number;
  progress: ImportProgress;
  path: string;
  error: { code: string; message: string; details: unknown[] } | null;
  /** The registration in the catalog; null until a dataset import has published. */
  catalog: CatalogRegistrationState | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
}

/** What a request to import came to: 202 when a job was queued, 200 when storage already holds it. */
export interface ImportReply {
  status: 200 | 202;
  record: ImportRecord;
}

const iso = (ms: number | undefined): string | null => (ms ? new Date(ms).toISOString() : null);

function isProgress(value: unknown): value is ImportProgress {
  return typeof value === 'object' && value !== null && 'bytes_done' in value;
}

/** The record state of a job in a BullMQ state: a failed job is rejected when its error is final. */
export function recordStateOf(job: Pick<ImportJobFields, 'data'>, jobState: string): ImportState {
  if (jobState === 'failed') return job.data.error?.permanent ? 'rejected' : 'failed';
  if (jobState === 'completed') return 'imported';
  return jobState === 'active' ? 'running' : 'queued';
}

/**
 * The record is read straight from the BullMQ job: data (what and where, last error),
 * progress (counters), return value (the result), timestamps and attempt counts. `keptDetails`:
 * how many of the error's problems to show (a listing shows fewer; see record-bounds.ts), the
 * others counted in a `more_problems` entry, whatever an older record stored.
 */
export function recordFromJob(
  job: ImportJobFields,
  jobState: string,
  keptDetails = MAX_KEPT_PROBLEMS,
): ImportRecord {
  const data = job.data;
  const failed = jobState === 'failed';
  const state = recordStateOf(job, jobState);
  const lastError =
    data.error ??
    (failed ? { code: 'failed', message: job.failedReason || 'failed', details: [] } : undefined);
  // A queued job that already failed once is waiting out its backoff: show why.
  const showError =
    state === 'failed' || state === 'rejected' || (state === 'queued' && job.attemptsMade > 0);
  let progress = isProgress(job.progress) ? { ...job.progress } : { ...NO_PROGRESS };
  if (state === 'imported' && job.returnvalue) {
    const { files, bytes } = job.returnvalue;
    progress = { files_done: files, files_total: files, bytes_done: bytes, bytes_total: bytes };
  }
  return {
    id: job.id!,
    kind: job.name as ImportKind,
    source: data.source,
    key: data.key,
    state,
    attempts: Math.max(job.attemptsStarted ?? 0, job.attemptsMade),
    progress,
    path: job.returnvalue?.path ?? data.path,
    error:
      showError && lastError
        ? {
            code: lastError.code,
            message: clip(lastError.message, MESSAGE_CHARS),
            details: boundedDetails(lastError.details, keptDetails),
          }
        : null,
    catalog: data.catalog ?? null,
    created_at: iso(job.timestamp)!,
    started_at: iso(job.processedOn),
    finished_at:
      state === 'imported' || state === 'failed' || state === 'rejected'
        ? iso(job.finishedOn)
        : null,
  };
}
