import type { DatasetNotReadyReason, PayloadCheck } from './dataset-directory/dataset-directory';
import type { FileRules, SourceProblem } from './dataset-directory/source-file';

/**
 * The one interface every source adapter implements. Metadata comes from the adapter;
 * the bytes of a dataset are always a local directory (a drop zone or a landing zone),
 * laid out as described in dataset-directory/.
 */
export interface SourceSubmission {
  ref: string;
  title: string;
  status: string;
  project: string;
  eligible: boolean;
  datasetIds: string[];
  /** What the source said about the submission, stored verbatim in submission.json. */
  raw: unknown;
}

export interface SourceDataset {
  datasetId: string;
  submissionRef: string;
  title: string;
  fileCount: number | null;
  byteSize: number | null;
  ready: boolean;
  reason: DatasetNotReadyReason | null;
  /** Human detail for the reason (for example which manifest paths are missing). */
  reasonDetail: string | null;
  /** Every problem behind `metadata_refused` / `metadata_invalid` (an import's error details). */
  problems: SourceProblem[];
  /** Device and inode of the dataset directory when read (an import checks it is the same). */
  directoryIdentity: string | null;
  /** The longest manifest paths, longest first, where an import request's reading kept them. */
  longestPaths?: string[];
  metadata: unknown;
}

/** Where the bytes of one dataset are, for the import pipeline. */
export interface SourceDatasetLocation {
  /** Absolute directory holding the dataset (manifest, marker, payload/). */
  directory: string;
  /** Absolute directory holding the payload files. */
  payloadRoot: string;
}

/** A payload object of a remote dataset, as its store lists it. */
export interface RemoteObject {
  /** Relative to the payload: a manifest path. */
  path: string;
  size: number;
  /** The store's ETag (unquoted, lower case): the version of the object. */
  etag: string;
  lastModifiedMs: number;
}

/** Where a server-side copy takes a payload object from. */
export interface ObjectCopySource {
  /** The store (an S3 endpoint): a copy is server-side only within one store. */
  store: string;
  bucket: string;
  key: string;
}

/**
 * A dataset whose bytes are objects in a store (an S3 inbox) rather than a local directory: what
 * the import's preflight and copy read instead of the directory. Same layout, same rules: the
 * marker, the manifests (read in chunks within their limits), payload/ holding the files.
 */
export interface RemoteDataset {
  /** Whether the dataset's `.ready` marker is there. */
  hasMarker(): Promise<boolean>;
  /**
   * One of the dataset's own files (a manifest) chunk by chunk, never more than `rules.maxBytes`:
   * 'read', null when it is absent, or why it is refused (too large).
   */
  readChunks(
    name: string,
    rules: FileRules,
    onChunk: (chunk: Buffer) => void,
  ): Promise<'read' | SourceProblem | null>;
  /**
   * Every payload object, page by page (never every key at once); a name the drop zone would
   * refuse is a problem, not an object.
   */
  walkPayload(
    onObject: (object: RemoteObject) => void,
    onProblem: (problem: SourceProblem) => void,
  ): Promise<void>;
  /**
   * The bytes of a payload object, only the version with this ETag (If-Match): SourceChangedError
   * when it changed or is gone. `size`, the size listed, lets a small object be read whole.
   */
  read(path: string, etag: string, size?: number): AsyncIterable<Uint8Array>;
  /** Where a server-side copy takes the object from; null when the source allows none. */
  copySource(path: string): ObjectCopySource | null;
}

/** A remote dataset's object changed or went away since it was listed. */
export class SourceChangedError extends Error {
  constructor(
    readonly path: string,
    readonly what: string,
  ) {
    super(`source object changed during the import: ${path} (${what})`);
    this.name = 'SourceChangedError';
  }
}

export type DatasetFilter = (submission: SourceSubmission, datasetId: string) => boolean;

export interface FindDatasetOptions {
  /** How far the manifests and payload are inspected (see PayloadCheck); default 'sizes'. */
  payload?: PayloadCheck;
}

export interface SourceSystem {
  readonly name: string;
  readonly type: string;
  /** Every submission the source lists, eligible or not. */
  listSubmissions(): Promise<SourceSubmission[]>;
  /** One submission at any status (how withdrawals are seen); null when unknown. */
  getSubmission(ref: string): Promise<SourceSubmission | null>;
  /**
   * Datasets of the given submissions (bulk, so callers never loop with one call per dataset).
   * With `include`, only the datasets it accepts are inspected and returned (a diff skips what
   * storage already holds). Listings may answer from a cache of unchanged datasets.
   */
  listDatasets(submissions: SourceSubmission[], include?: DatasetFilter): Promise<SourceDataset[]>;
  /**
   * One dataset with its submission, or null when no listed submission declares it. Always
   * read afresh (imports and import requests rely on it), never from a listing cache.
   */
  findDataset(
    datasetId: string,
    options?: FindDatasetOptions,
  ): Promise<{ dataset: SourceDataset; submission: SourceSubmission } | null>;
  /** Where a dataset's files are on this host (sources with `remoteDataset` have none). */
  locateDataset(datasetId: string): SourceDatasetLocation;
  /**
   * Present where a dataset's bytes are objects in a store (the S3 inbox): the import reads them
   * through this instead of a local directory.
   */
  remoteDataset?(datasetId: string): RemoteDataset;
}

/**
 * Thrown by adapters when something exists in the source but its metadata cannot be used (a
 * submission directory or submission.json that is a link, a special file, over its limit):
 * a refusal for the caller (409, or a rejected import), never something to retry.
 */
export class SourceRefusedError extends Error {
  constructor(
    readonly source: string,
    message: string,
    readonly problems: SourceProblem[],
  ) {
    super(message);
    this.name = 'SourceRefusedError';
  }
}

/** Thrown by adapters when the source system cannot be reached or answers nonsense. */
export class SourceUnavailableError extends Error {
  constructor(
    readonly source: string,
    message: string,
  ) {
    super(message);
    this.name = 'SourceUnavailableError';
  }
}

/*
 * The face of sources/: what other folders use of the safe reading of a dataset directory
 * (its layout, manifests, pinned directories, file checks) is exported here, so nothing
 * outside sources/ depends on how dataset-directory/ is split into files. The internals never
 * import this file.
 */
export type { DatasetNotReadyReason, PayloadCheck };
export type { FileRules, SourceProblem };
export {
  ALGORITHMS,
  manifestRules,
  MARKER_RULES,
  PAYLOAD_DIR,
  READY_MARKER,
} from './dataset-directory/dataset-directory';
export {
  ManifestParser,
  MANIFEST_FILES,
  MAX_KEPT_PROBLEMS,
} from './dataset-directory/manifest';
export type { ChecksumAlgorithm, ManifestProblem } from './dataset-directory/manifest';
export type { PathProblem } from './dataset-directory/payload-path';
export {
  checkSegment,
  decodeName,
  isPathTooLong,
  MAX_PATH_BYTES,
  printableName,
} from './dataset-directory/payload-path';
export { identityOf, pinDirectory, pinDirectorySync } from './dataset-directory/pinned-directory';
export type { PinnedDirectory } from './dataset-directory/pinned-directory';
export {
  checkRegularFile,
  isProblem,
  kindOf,
  OPEN_SOURCE_FLAGS,
  readSourceChunks,
} from './dataset-directory/source-file';
export { closeSourceScanner, sourceScanner } from './dataset-directory/source-scanner';
