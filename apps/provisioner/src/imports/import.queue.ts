import type { JobsOptions } from 'bullmq';

/**
 * The imports queue in one place: its name, job names, payloads, job-id rule and retry preset.
 * Producers and the processor import only from here.
 */
export const IMPORTS_QUEUE = 'imports';

export enum ImportJobName {
  /** A no-op round trip: proves an API can enqueue and a worker completes. */
  Ping = 'ping',
  /** Creates a submission's project collection. */
  Submission = 'submission',
  /** Copies one dataset into data/raw/<dataset_id>/. */
  Dataset = 'dataset',
  /** The scheduled run: every eligible submission, then every ready dataset, of every source. */
  Sync = 'sync',
}

export type ImportKind = ImportJobName.Submission | ImportJobName.Dataset;
export const IMPORT_KINDS: readonly ImportKind[] = [
  ImportJobName.Submission,
  ImportJobName.Dataset,
];

/** What an import record says of its registration (`catalog` in the record). */
export type CatalogState = 'pending' | 'registered' | 'refused' | 'off';

export interface CatalogRegistrationState {
  state: CatalogState;
  accession: string | null;
  error: { code: string; message: string } | null;
  /** The dataset as a DRS object (`drs://host/id`), registered with it; only while DRS is on. */
  drs_uri?: string;
}

/** Stored on the job when an attempt fails, so the record can say why (and whether it is final). */
export interface ImportJobError {
  code: string;
  message: string;
  details: unknown[];
  permanent: boolean;
}

/** The payload of an import job; `path` is where the result lands in storage. */
export interface ImportJobData {
  source: string;
  key: string;
  path: string;
  error?: ImportJobError;
  /** Epoch ms when the first attempt started (kept across retries, for the duration metric). */
  first_started_at?: number;
  /** The registration in the catalog, once the dataset is published (storage-registration/). */
  catalog?: CatalogRegistrationState;
}

export interface ImportJobResult {
  path: string;
  files: number;
  bytes: number;
  copied: boolean;
}

export interface ImportJobPayloads {
  [ImportJobName.Ping]: { sentAt: string };
  [ImportJobName.Submission]: ImportJobData;
  [ImportJobName.Dataset]: ImportJobData;
  [ImportJobName.Sync]: Record<string, never>;
}

export interface ImportJobResults {
  [ImportJobName.Ping]: { pong: true; receivedAt: string };
  [ImportJobName.Submission]: ImportJobResult;
  [ImportJobName.Dataset]: ImportJobResult;
  [ImportJobName.Sync]: { queued: number };
}

export const SYNC_SCHEDULER_ID = 'sync';

/**
 * Job ids are derived from what the job is about, so adding the same work twice (a second
 * request, a retry, the scheduler) finds the existing job instead of starting another copy.
 */
export function importJobId(...parts: string[]): string {
  return parts.join('-');
}

/** The id of an import: source names hold no '-', kinds hold none, so the split is unambiguous. */
export function importId(source: string, kind: ImportKind, key: string): string {
  return importJobId(source, kind, key);
}

export function parseImportId(
  id: string,
): { source: string; kind: ImportKind; key: string } | null {
  const match = /^([a-z][a-z0-9_]*)-(submission|dataset)-(.+)$/.exec(id);
  return match ? { source: match[1], kind: match[2] as ImportKind, key: match[3] } : null;
}

/** Exponential backoff for transient faults; failed jobs are kept for inspection. */
export function importRetryPreset(maxAttempts: number): JobsOptions {
  return {
    attempts: maxAttempts,
    backoff: { type: 'exponential', delay: 5_000 },
    removeOnComplete: false,
    removeOnFail: false,
  };
}
