import {
  DatasetReading,
  metadataRules,
  readDatasetDirectory,
  ReadDatasetOptions,
  refusedInspection,
  watchedPaths,
} from './dataset-directory';
import { signatureOfPaths, stillSigned } from './file-signature';
import { ABSENT_DOCUMENT, JsonDocument, readJsonDocumentSync } from './json-document';
import { pinDirectorySync } from './pinned-directory';
import { isProblem, SourceProblem } from './source-file';
import type { SourceLimits } from '../../config/source-config';

/**
 * The blocking reads of a source's files, as run by the source-scan thread (SourceScanner):
 * each item names what the caller has cached (`known`, a signature key) and gets back null when
 * that still holds, or a fresh answer. The thread keeps no state of its own.
 */

export interface ScanItem {
  /** The dataset directory, or the submission directory holding `name`. */
  dir: string;
  /** Signature key of what the caller holds, or null for a fresh read. */
  known: string | null;
}

export interface ScanAnswer<T> {
  /** Key to cache the value under; null when something changed too recently to trust it. */
  key: string | null;
  value: T;
  /** What the answer weighs in a cache (the size of the document it holds). */
  bytes: number;
}

export interface DatasetScanRequest {
  op: 'datasets';
  items: ScanItem[];
  options: ReadDatasetOptions;
}

export interface DocumentScanRequest {
  op: 'documents';
  items: ScanItem[];
  name: string;
  limits: SourceLimits;
}

export type ScanRequest = DatasetScanRequest | DocumentScanRequest;

/**
 * What an item that could not be read at all (EACCES, EIO...) answers, so that one dataset or
 * submission a depositor made unreadable does not fail a whole listing: refused, never cached.
 */
function unreadable(error: unknown): SourceProblem {
  const e = error as NodeJS.ErrnoException;
  return {
    code: 'unreadable',
    path: '',
    message: `cannot be read by the provisioner (${e.code ?? e.message})`,
  };
}

function probe<T>(
  item: ScanItem,
  watched: string[],
  read: () => { value: T; bytes: number },
  failed: (problem: SourceProblem) => T,
): ScanAnswer<T> | null {
  try {
    return probeOrThrow(item, watched, read);
  } catch (error) {
    return { key: null, value: failed(unreadable(error)), bytes: 0 };
  }
}

function probeOrThrow<T>(
  item: ScanItem,
  watched: string[],
  read: () => { value: T; bytes: number },
): ScanAnswer<T> | null {
  if (item.known !== null && stillSigned(watched, item.known)) return null;
  // Taken before reading: a change made while we read has an mtime after this instant, so the
  // racy rule keeps it out of the cache.
  const started = Date.now();
  const { value, bytes } = read();
  const signature = signatureOfPaths(watched, started);
  return { key: signature.settled ? signature.key : null, value, bytes };
}

/** A submission-style document: `<dir>/<name>`, the directory not a link. */
export function readDocumentIn(dir: string, name: string, limits: SourceLimits): JsonDocument {
  const pinned = pinDirectorySync(dir, '');
  if (pinned === null) return ABSENT_DOCUMENT;
  if (isProblem(pinned)) return { value: null, problem: pinned };
  try {
    return readJsonDocumentSync(`${pinned.view}/${name}`, name, metadataRules(limits));
  } finally {
    pinned.close();
  }
}

/** What an answer weighs in a cache: the size of the document it holds, as JSON. */
function weight(document: JsonDocument | null): number {
  return document?.value ? JSON.stringify(document.value).length : 0;
}

export function runScan(request: DatasetScanRequest): (ScanAnswer<DatasetReading> | null)[];
export function runScan(request: DocumentScanRequest): (ScanAnswer<JsonDocument> | null)[];
export function runScan(
  request: ScanRequest,
): (ScanAnswer<DatasetReading> | ScanAnswer<JsonDocument> | null)[];
export function runScan(
  request: ScanRequest,
): (ScanAnswer<DatasetReading> | ScanAnswer<JsonDocument> | null)[] {
  if (request.op === 'datasets') {
    const { options } = request;
    return request.items.map((item) =>
      probe(
        item,
        watchedPaths(item.dir, options.document !== 'none'),
        () => {
          const reading = readDatasetDirectory(item.dir, options);
          return { value: reading, bytes: weight(reading.document) };
        },
        (problem) => ({ inspection: refusedInspection([problem], null), document: null }),
      ),
    );
  }
  return request.items.map((item) =>
    probe(
      item,
      [item.dir, `${item.dir}/${request.name}`],
      () => {
        const document = readDocumentIn(item.dir, request.name, request.limits);
        return { value: document, bytes: weight(document) };
      },
      (problem) => ({ value: null, problem }),
    ),
  );
}
