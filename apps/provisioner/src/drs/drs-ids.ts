import { createHash } from 'node:crypto';
import { isSafeSegment } from '../sources/safe-segment';
import { datasetPath } from '../storage/storage-layout';

/**
 * DRS ids of stored data. A dataset is `<project>~<submission>~<dataset_id>` (its storage path's
 * three names; `~` is unreserved in URIs and never in a name), and each of its files is the
 * dataset's id, `~`, and the first 20 hex digits of the SHA-256 of the file's path in the
 * dataset. Both are stable for as long as the published copy exists (it is never rewritten),
 * need no index to resolve, and use only characters a `drs://host/<id>` URI keeps as they are.
 */
export interface DatasetRef {
  project: string;
  submission: string;
  datasetId: string;
}

export type DrsId =
  | { kind: 'dataset'; id: string; dataset: DatasetRef }
  | { kind: 'file'; id: string; dataset: DatasetRef; pathDigest: string };

const SEPARATOR = '~';
const PATH_DIGEST = /^[0-9a-f]{20}$/;
/** The longest id this scheme makes (three names of at most 128 characters, and a digest). */
export const MAX_DRS_ID_LENGTH = 3 * 128 + 3 + 20;

export function datasetDrsId(dataset: DatasetRef): string {
  return [dataset.project, dataset.submission, dataset.datasetId].join(SEPARATOR);
}

/** The digest part of a file's id: the first 20 hex digits of SHA-256 of its path. */
export function filePathDigest(path: string): string {
  return createHash('sha256').update(path).digest('hex').slice(0, 20);
}

export function fileDrsId(dataset: DatasetRef, path: string): string {
  return `${datasetDrsId(dataset)}${SEPARATOR}${filePathDigest(path)}`;
}

/** The storage path of a dataset the id names. */
export function datasetPathOf(dataset: DatasetRef): string {
  return datasetPath(dataset.project, dataset.submission, dataset.datasetId);
}

/**
 * The id parsed, or undefined for anything this scheme never made (an encoded character, a
 * `..`, a separator too many): such an id names nothing, whatever it would decode to.
 */
export function parseDrsId(id: string): DrsId | undefined {
  if (id.length > MAX_DRS_ID_LENGTH) return undefined;
  const parts = id.split(SEPARATOR);
  if (parts.length !== 3 && parts.length !== 4) return undefined;
  const [project, submission, datasetId, digest] = parts;
  if (![project, submission, datasetId].every(isSafeSegment)) return undefined;
  const dataset = { project, submission, datasetId };
  if (digest === undefined) return { kind: 'dataset', id, dataset };
  if (!PATH_DIGEST.test(digest)) return undefined;
  return { kind: 'file', id, dataset, pathDigest: digest };
}
