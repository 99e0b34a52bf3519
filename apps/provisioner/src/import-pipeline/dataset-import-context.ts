import type { SourceLimits } from '../config/source-config';
import type { ValidatorConfig } from '../config/validator-config';
import type { SourceDataset, SourceSubmission, SourceSystem } from '../sources/source-system';
import type { StorageSystem } from '../storage/storage-system';
import type { ImportTimeline } from './import-steps';
import type { ImportProgress } from '../imports/import-progress';
import type { CopyThreadPool, FileBudget } from './copying';
import type { ValidatorWorkArea } from './validation/validator-work-area';

/** What one attempt of a dataset import is given by the job that runs it. */
export interface DatasetImportContext {
  importId: string;
  attempt: number;
  queuedAt: Date | null;
  source: SourceSystem;
  storage: StorageSystem;
  datasetId: string;
  versions: Record<string, string>;
  reportProgress: (progress: ImportProgress) => Promise<void>;
  /** Counts what is copied as it is copied (the worker's import metrics). */
  copyMeter?: CopyMeter;
  /**
   * The worker's copy threads (IMPORT_COPY_THREADS of them), which copy every file where the
   * storage's objects are local files, and read the small ones for S3; without a pool, or with
   * one of size 0, files are copied on the main thread's lanes.
   */
  copyPool?: CopyThreadPool;
  /** Files copied at once on the main thread's lanes; default: the storage's copyLanes. */
  copyConcurrency?: number;
  /** Each lane's buffer size; default: the storage's copyBufferBytes. */
  bufferBytes?: number;
  /**
   * Caps on the dataset's metadata (SOURCE_*_MAX_BYTES): the worker's settings, which the API
   * applied when it listed and queued the dataset, so the preflight must apply the same.
   */
  sourceLimits: SourceLimits;
  /** Runs the import's steps (their spans, histogram and log line); default: a timeline of its own. */
  timeline?: ImportTimeline;
  /**
   * Aborted when the worker stops (SIGTERM): the copy stops after the chunk in flight and the
   * attempt ends with ImportStoppedError, its staging area kept for the next attempt.
   */
  signal?: AbortSignal;
  /** No attempt follows this one if it fails: its staging is removed then, not kept. */
  lastAttempt?: boolean;
  /**
   * A file whose source changed (ctime) less than this long before it was copied is not
   * recorded for a later attempt to keep (preflight.ts, RECENT_CHANGE_MS); tests of fresh
   * files set 0. Not used for a remote dataset, whose objects' ETags say whether they changed.
   */
  recentChangeMs?: number;
  /** The worker's budget of files held by running imports (IMPORT_MAX_FILES); none: no bound. */
  fileBudget?: FileBudget;
  /** The source's validators (SOURCES[].validators), run on the staged files before publication. */
  validators?: readonly ValidatorConfig[];
  /**
   * The worker's bounded directory for validations (VALIDATOR_WORK_DIR, VALIDATOR_WORK_MAX_BYTES);
   * absent: the system's temporary directory, unbounded.
   */
  validatorWork?: ValidatorWorkArea;
}

export interface CopyMeter {
  addBytes(n: number): void;
  addFiles(n: number): void;
}

export interface DatasetImportResult {
  path: string;
  files: number;
  bytes: number;
  /** False when the dataset was found already published by this very import (a re-run after a crash). */
  copied: boolean;
}

/** The dataset as the source lists it, and where it lands in storage. */
export interface ResolvedDataset {
  dataset: SourceDataset;
  submission: SourceSubmission;
  target: string;
  /** Data staging areas of earlier attempts of this import, newest first: adopted by this one. */
  earlierAreas: string[];
}
