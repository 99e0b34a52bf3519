import { datasetDrsId } from '../drs/drs-ids';
import { createHash } from 'node:crypto';
import { readProvenanceHead } from '../storage/provenance';
import {
  collectionPath,
  PROVENANCE_DIR,
  PROVENANCE_FILE,
  STORED_MANIFEST_FILE,
  SUBMISSION_FILE,
} from '../storage/storage-layout';
import type { StorageSystem } from '../storage/storage-system';
import type { StorageRegistration } from '../catalog-client/catalog.client';

/** The published copy cannot be described (removed from storage, no provenance): not retried. */
export class RegistrationUnusableError extends Error {
  readonly reason = 'not_in_storage';
}

const text = (value: unknown): string | undefined =>
  typeof value === 'string' && value.trim().length > 0 ? value.trim() : undefined;

const field = (object: unknown, key: string): unknown =>
  typeof object === 'object' && object !== null
    ? (object as Record<string, unknown>)[key]
    : undefined;

/**
 * The submitting partner named by the source: `partner` of the drop zone's submission.json, or
 * of the submission system's submission record (its details, else its summary).
 */
function partnerOf(submission: unknown): string | undefined {
  return (
    text(field(submission, 'partner')) ??
    text(field(field(submission, 'details'), 'partner')) ??
    text(field(field(submission, 'summary'), 'partner'))
  );
}

/** Read at a time while hashing the stored manifest (a million files: ~100 MB of it). */
const MANIFEST_PIECE_BYTES = 8 * 1024 * 1024;

/** The SHA-256 of an object, read a piece at a time; null when it is absent. */
async function sha256Of(storage: StorageSystem, path: string): Promise<string | null> {
  const hash = createHash('sha256');
  for (let start = 0; ;) {
    const piece = await storage.readObject(path, { start, length: MANIFEST_PIECE_BYTES });
    if (piece === null) return null;
    hash.update(piece);
    start += piece.length;
    if (piece.length < MANIFEST_PIECE_BYTES) return hash.digest('hex');
  }
}

/** The copy's total bytes as the provenance states them, when they are a size the catalog takes. */
function bytesOf(totals: unknown): number | undefined {
  const bytes = field(totals, 'bytes');
  return typeof bytes === 'number' && Number.isSafeInteger(bytes) && bytes >= 0 ? bytes : undefined;
}

/**
 * What to register, read from storage (the truth, and what the import wrote): the dataset's
 * provenance (source, submission, project, title, its total bytes, and its metadata, whose
 * `accession` names the catalog dataset when the source knows it), the SHA-256 of the stored
 * manifest (`.provisioner/manifest-sha256.txt`, the SHA-256 of every file: a copy of many files
 * has no single checksum, its manifest's stands for it) and the collection's submission.json
 * (the partner). The manifest is hashed as stored, read back through the storage interface, so
 * both backends give the digest of the same bytes a reader of the copy finds.
 */
export async function describeRegistration(
  storage: StorageSystem,
  importId: string,
  path: string,
  platform: string,
  publishedOn: string,
  /** The host of this provisioner's DRS URIs; undefined while DRS is off. */
  drsHost?: string,
): Promise<StorageRegistration> {
  const provenance = await readProvenanceHead(
    storage,
    `${path}/${PROVENANCE_DIR}/${PROVENANCE_FILE}`,
  );
  if (provenance === null)
    throw new RegistrationUnusableError(`${path} holds no provenance: nothing to register`);
  const { submission, dataset, source } = provenance;
  const manifestSha256 = await sha256Of(
    storage,
    `${path}/${PROVENANCE_DIR}/${STORED_MANIFEST_FILE}`,
  );
  const bytes = bytesOf(provenance.totals);
  const collection = await storage.readObject(
    `${collectionPath(submission.project, submission.ref)}/${SUBMISSION_FILE}`,
  );
  let submitted: unknown = null;
  try {
    submitted = collection ? (JSON.parse(collection.toString('utf8')) as unknown) : null;
  } catch {
    // A damaged submission.json only costs the transfer (the partner is unknown).
  }
  const partner = partnerOf(field(submitted, 'submission'));
  const accession = text(field(dataset.metadata, 'accession'));
  return {
    import_id: importId,
    dataset: {
      ...(accession === undefined ? {} : { accession }),
      title: dataset.title,
      project: submission.project,
    },
    storage: {
      platform,
      location: storage.location(path),
      ...(bytes === undefined ? {} : { bytes }),
      ...(manifestSha256 === null ? {} : { manifest_sha256: manifestSha256 }),
      ...(drsHost === undefined
        ? {}
        : {
            drs_uri: `drs://${drsHost}/${datasetDrsId({
              project: submission.project,
              submission: submission.ref,
              datasetId: dataset.dataset_id,
            })}`,
          }),
    },
    ...(partner === undefined
      ? {}
      : {
          transfer: {
            partner,
            source: source.name,
            submission: submission.ref,
            date: publishedOn,
          },
        }),
  };
}
