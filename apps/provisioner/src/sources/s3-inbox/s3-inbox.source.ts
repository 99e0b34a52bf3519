import { readFileSync } from 'node:fs';
import { mapLimit } from '../../common/map-limit';
import { createS3Client, s3StoreName } from '../../common/s3/s3-client';
import type { S3Timeouts } from '../../common/s3/signed-put';
import {
  DEFAULT_SOURCE_LIMITS,
  type S3SourceConfig,
  type SourceLimits,
} from '../../config/source-config';
import { type DatasetReading, metadataRules } from '../dataset-directory/dataset-directory';
import {
  ABSENT_DOCUMENT,
  type JsonDocument,
  parseJsonDocument,
  summarizeDatasetDocument,
} from '../dataset-directory/json-document';
import { tooLarge } from '../dataset-directory/source-file';
import { isSafeSegment } from '../safe-segment';
import {
  type DatasetFilter,
  type FindDatasetOptions,
  type RemoteDataset,
  type SourceDataset,
  type SourceDatasetLocation,
  type SourceSubmission,
  type SourceSystem,
} from '../source-system';
import {
  datasetWithSubmission,
  listedDatasets,
  refuseUnlistedSubmission,
  submissionFromDocument,
  SUBMISSION_DOCUMENT,
} from '../submission-documents';
import { InboxBucket, type ListedObject } from './inbox-bucket';
import { InboxDataset } from './inbox-dataset';
import { DEFAULT_RANGED_READS, ReadAheadBudget, type RangedReadSettings } from './ranged-read';

/** Requests in flight for one listing (submission documents, datasets' first levels). */
const LIST_CONCURRENCY = 16;
/**
 * Listing caches, each entry a few hundred bytes: a dataset's reading is kept while its first
 * level (marker, manifests, dataset.json: their ETags) is unchanged; a submission's document
 * while its ETag is. Past the bound the oldest go and are read again.
 */
const MAX_CACHED = 100_000;

/** The key pair of an S3 source: inline, from its secret file, or none (the SDK's chain). */
function credentialsOf(
  config: S3SourceConfig,
): { accessKeyId: string; secretAccessKey: string } | undefined {
  if (config.access_key_id && config.secret_access_key)
    return { accessKeyId: config.access_key_id, secretAccessKey: config.secret_access_key };
  if (!config.credentials_file) return undefined;
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(config.credentials_file, 'utf8'));
  } catch (error) {
    throw new Error(
      `SOURCES: source ${config.name}: credentials_file ${config.credentials_file} cannot be read as JSON (${(error as Error).message})`,
    );
  }
  const { access_key_id: id, secret_access_key: secret } = (raw ?? {}) as Record<string, unknown>;
  if (typeof id !== 'string' || typeof secret !== 'string' || !id || !secret)
    throw new Error(
      `SOURCES: source ${config.name}: credentials_file must hold {"access_key_id": "...", "secret_access_key": "..."}`,
    );
  return { accessKeyId: id, secretAccessKey: secret };
}

/** A Map that forgets its oldest entries past MAX_CACHED. */
class BoundedCache<V> extends Map<string, V> {
  override set(key: string, value: V): this {
    this.delete(key);
    super.set(key, value);
    if (this.size > MAX_CACHED) this.delete(this.keys().next().value!);
    return this;
  }
}

/** What identifies a dataset's first level: a reading is reused while it is the same. */
function signatureOf(top: { objects: ListedObject[]; folders: string[] }): string {
  return [
    ...top.objects.map((o) => `${o.key}\u0000${o.etag}\u0000${o.size}`),
    ...top.folders.map((f) => `${f}/`),
  ].join('\u0001');
}

/**
 * An S3 inbox (NeIC SDA's, GHGA's): the drop zone's tree as keys under the source's prefix of a
 * bucket on any S3-compatible store, written by submitters with their own credentials:
 *   submissions/<ref>/submission.json
 *   datasets/<dataset_id>/{dataset.json, manifest-*.txt, .ready, payload/...}
 * Same rules as the drop zone (submission-documents.ts, inbox-dataset.ts): a dataset belongs to
 * the submission both name, `.ready` is written last, the same names are allowed and refused.
 * Listings are paged (a prefix of a million objects is never held whole); an import reads the
 * bytes through remoteDataset (every object by the ETag its preflight listed) and, where the
 * storage is the same store, copies them server-side.
 */
export class S3InboxSource implements SourceSystem {
  readonly type = 's3';
  readonly name: string;
  private readonly bucket: InboxBucket;
  private readonly store: string;
  private readonly datasets = new BoundedCache<{ signature: string; reading: DatasetReading }>();
  private readonly submissions = new BoundedCache<{ etag: string; document: JsonDocument }>();

  constructor(
    private readonly config: S3SourceConfig,
    private readonly limits: SourceLimits = DEFAULT_SOURCE_LIMITS,
    timeouts?: S3Timeouts,
    /** How large objects are read, and the worker's read-ahead budget (shared by its inboxes). */
    reads: { settings: RangedReadSettings; budget: ReadAheadBudget } = {
      settings: DEFAULT_RANGED_READS,
      budget: ReadAheadBudget.of(DEFAULT_RANGED_READS),
    },
  ) {
    this.name = config.name;
    this.store = s3StoreName(config.endpoint, config.region);
    const client = createS3Client({
      endpoint: config.endpoint,
      region: config.region,
      forcePathStyle: config.force_path_style,
      credentials: credentialsOf(config),
      timeouts,
    });
    this.bucket = new InboxBucket(
      config.name,
      client,
      config.bucket,
      config.prefix,
      reads.settings,
      reads.budget,
    );
  }

  /**
   * Submissions from one paged listing of submissions/ (documents read again only when their
   * ETag changed); one whose submission.json is refused or names another folder is left out
   * (getSubmission tells why).
   */
  async listSubmissions(): Promise<SourceSubmission[]> {
    const found: { ref: string; etag: string }[] = [];
    for await (const objects of this.bucket.objects('submissions/'))
      for (const object of objects) {
        const slash = object.key.indexOf('/');
        const ref = object.key.slice(0, slash);
        if (object.key.slice(slash + 1) === SUBMISSION_DOCUMENT && isSafeSegment(ref))
          found.push({ ref, etag: object.etag });
      }
    const documents = await mapLimit(found, LIST_CONCURRENCY, async ({ ref, etag }) => {
      const cached = this.submissions.get(ref);
      if (cached?.etag === etag) return cached.document;
      const document = await this.readSubmissionDocument(ref);
      this.submissions.set(ref, { etag, document });
      return document;
    });
    return found
      .map(({ ref }, i) =>
        documents[i].problem ? null : this.toSubmission(ref, documents[i].value),
      )
      .filter((s): s is SourceSubmission => s !== null)
      .sort((a, b) => (a.ref < b.ref ? -1 : a.ref > b.ref ? 1 : 0));
  }

  async getSubmission(ref: string): Promise<SourceSubmission | null> {
    if (!isSafeSegment(ref)) return null;
    const { value, problem: read } = await this.readSubmissionDocument(ref);
    refuseUnlistedSubmission(this.name, ref, value, read, this.limits);
    return this.toSubmission(ref, value);
  }

  async listDatasets(
    submissions: SourceSubmission[],
    include?: DatasetFilter,
  ): Promise<SourceDataset[]> {
    return listedDatasets(submissions, include, (ids) =>
      mapLimit(ids, LIST_CONCURRENCY, (id) => this.listingReading(id)),
    );
  }

  /** Like the drop zone's: the submission dataset.json names, if it lists the dataset. */
  async findDataset(
    datasetId: string,
    options: FindDatasetOptions = {},
  ): Promise<{ dataset: SourceDataset; submission: SourceSubmission } | null> {
    if (!isSafeSegment(datasetId)) return null;
    const dataset = this.dataset(datasetId);
    const top = await dataset.top();
    const payload = options.payload ?? 'sizes';
    const reading = await dataset.inspect(top, { document: 'full', payload });
    if (payload === 'sizes') {
      const document = reading.document && summarizeDatasetDocument(reading.document);
      this.datasets.set(datasetId, {
        signature: signatureOf(top),
        reading: { ...reading, document },
      });
    }
    return datasetWithSubmission(this, datasetId, reading);
  }

  /** The inbox has no local directory: imports read it through remoteDataset. */
  locateDataset(datasetId: string): SourceDatasetLocation {
    throw new Error(`source ${this.name} keeps dataset ${datasetId} in S3, not in a directory`);
  }

  remoteDataset(datasetId: string): RemoteDataset {
    return this.dataset(datasetId);
  }

  private dataset(datasetId: string): InboxDataset {
    return new InboxDataset(
      this.bucket,
      datasetId,
      this.limits,
      this.config.server_side_copy ? this.store : null,
    );
  }

  /** A listing's reading of a dataset: the cached one while its first level is unchanged. */
  private async listingReading(datasetId: string): Promise<DatasetReading> {
    const dataset = this.dataset(datasetId);
    const top = await dataset.top();
    const signature = signatureOf(top);
    const cached = this.datasets.get(datasetId);
    if (cached?.signature === signature) return cached.reading;
    const reading = await dataset.inspect(top, { document: 'summary', payload: 'sizes' });
    this.datasets.set(datasetId, { signature, reading });
    return reading;
  }

  private async readSubmissionDocument(ref: string): Promise<JsonDocument> {
    const rules = metadataRules(this.limits);
    const bytes = await this.bucket.readWhole(
      `submissions/${ref}/${SUBMISSION_DOCUMENT}`,
      rules.maxBytes,
    );
    if (bytes === null) return ABSENT_DOCUMENT;
    if (!Buffer.isBuffer(bytes))
      return { value: null, problem: tooLarge(SUBMISSION_DOCUMENT, bytes.tooLarge, rules) };
    return parseJsonDocument(bytes, SUBMISSION_DOCUMENT);
  }

  private toSubmission(ref: string, raw: JsonDocument['value']): SourceSubmission | null {
    return submissionFromDocument(ref, raw, this.config.importable_statuses, this.limits);
  }
}
