import {
  AbortMultipartUploadCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  ListObjectsV2CommandOutput,
  ListPartsCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { createHash } from 'node:crypto';
import { mapLimit } from '../../common/map-limit';
import { datasetCommitObject, isDatasetPath } from '../storage-layout';
import { formatJournal, JournalEntry, parseJournal, stagedFileOf } from '../staged-files-journal';
import {
  type ByteRange,
  ByteSource,
  contentPieces,
  type ObjectContent,
  ObjectWriter,
  OpenStagingOptions,
  StagedFile,
  StagingArea,
  StagingLostError,
  StorageRefusedError,
  StorageSystem,
  StorageUnavailableError,
  TargetExistsError,
} from '../storage-system';
import { PartBufferPool } from './part-buffer-pool';
import { signedPutOf } from './s3-client';
import { UNREACHABLE_CODES } from './s3-errors';
import {
  ResumableUpload,
  S3ObjectWriter,
  S3Target,
  S3VerificationError,
  SentPart,
  StoredObject,
  unquote,
} from './s3-object-writer';

const STAGING_DIR = '.staging';
/** S3's limit on a key, in UTF-8 bytes: a longer one is refused (KeyTooLongError). */
const MAX_KEY_BYTES = 1024;
const LIST_CONCURRENCY = 16;
const DELETE_BATCH = 1000;
/**
 * Files copied at once per import: small objects are latency-bound, so several (the server's
 * cost per request sets the pace: 16 were no faster than 8, and cost twice the read buffers).
 */
const S3_COPY_LANES = 8;
/** Read buffers of a copy lane (three each): small, the part buffers hold the bytes. */
const S3_COPY_BUFFER_BYTES = 128 * 1024;

export interface S3StorageOptions {
  bucket: string;
  /** Key prefix, '' or ending in '/'. */
  prefix: string;
  partBytes: number;
  /** Upload buffers of the whole process, in parts: the memory bound is this × partBytes. */
  uploadConcurrency: number;
}

interface StagingRecord {
  target: string;
  created: string;
}

function statusOf(error: unknown): number | undefined {
  return (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
}

const isNotFound = (error: unknown): boolean => {
  const name = (error as { name?: string }).name;
  return statusOf(error) === 404 && name !== 'NoSuchBucket';
};

/**
 * S3 failures as the storage interface names them. Refusals no retry can cure (a rejected
 * credential or signature, no permission, no bucket) become StorageRefusedError; the endpoint
 * not answering (a time-out, a refused or reset connection, 5xx, throttling) becomes
 * StorageUnavailableError, which is retried; anything else (a request the server refuses for
 * what it is) stays as it is.
 */
export function asStorageError(error: unknown, bucket: string): unknown {
  const name = (error as { name?: string }).name ?? '';
  const code = (error as { code?: string }).code ?? '';
  const status = statusOf(error);
  if (
    status === 403 ||
    status === 401 ||
    name === 'NoSuchBucket' ||
    ['InvalidAccessKeyId', 'SignatureDoesNotMatch', 'AccessDenied'].includes(name)
  )
    return new StorageRefusedError(
      `s3 bucket ${bucket} refused the request (${name || 'HTTP ' + String(status)})`,
    );
  if (
    name === 'TimeoutError' ||
    UNREACHABLE_CODES.has(code) ||
    (status !== undefined && status >= 500) ||
    name === 'SlowDown'
  )
    return new StorageUnavailableError(
      `s3 endpoint unavailable for bucket ${bucket}: ${(error as Error).message || name}`,
    );
  return error;
}

/**
 * Storage in an S3 bucket (any S3-compatible server), with the filesystem backend's layout under
 * S3_PREFIX. S3 has no rename, so a dataset is staged at its final keys and published by writing
 * its commit object (.provisioner/provenance.json) last; everything that reads storage treats a
 * dataset without it as absent. A staging record (<prefix>.staging/<id>) names the target, so a
 * dead attempt's objects and multipart uploads can be found and removed; nothing is deleted
 * under a dataset once its commit object exists. See docs/decisions/s3-storage-backend.md.
 */
export class S3Storage implements StorageSystem {
  readonly description: string;
  readonly maxKeyBytes = MAX_KEY_BYTES;
  private readonly target: S3Target;
  private readonly areas = new Map<string, S3StagingArea>();

  constructor(
    private readonly client: S3Client,
    private readonly options: S3StorageOptions,
  ) {
    this.description = `s3://${options.bucket}/${options.prefix}`;
    this.target = {
      client,
      put: signedPutOf(client),
      bucket: options.bucket,
      pool: new PartBufferPool(options.partBytes, options.uploadConcurrency),
    };
  }

  get bucket(): string {
    return this.options.bucket;
  }

  key(path: string): string {
    return `${this.options.prefix}${path}`;
  }

  keyBytes(path: string): number {
    return Buffer.byteLength(this.key(path));
  }

  location(path: string): string {
    return `s3://${this.options.bucket}/${this.key(path)}`;
  }

  /** A GET of the object pre-signed for `seconds`: the store serves the bytes (and ranges). */
  async byteSource(path: string, seconds: number): Promise<ByteSource> {
    const command = new GetObjectCommand({ Bucket: this.options.bucket, Key: this.key(path) });
    return { kind: 'url', url: await getSignedUrl(this.client, command, { expiresIn: seconds }) };
  }

  /** Readiness: the bucket exists and the credential may use it. */
  async checkReady(): Promise<void> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.options.bucket }));
    } catch (error) {
      const status = statusOf(error);
      if (status === 404) throw new Error(`s3 bucket ${this.options.bucket} does not exist`);
      if (status === 403 || status === 401)
        throw new Error(
          `s3 bucket ${this.options.bucket}: the credential was refused (HTTP ${status})`,
        );
      throw new Error(
        `s3 endpoint does not answer for bucket ${this.options.bucket}: ${(error as Error).message}`,
      );
    }
  }

  async exists(path: string): Promise<boolean> {
    return this.call(async () => {
      if (isDatasetPath(path)) return this.objectExists(this.key(datasetCommitObject(path)));
      if (await this.objectExists(this.key(path))) return true;
      const page = await this.client.send(
        new ListObjectsV2Command({ Bucket: this.bucket, Prefix: `${this.key(path)}/`, MaxKeys: 1 }),
      );
      return (page.KeyCount ?? 0) > 0;
    });
  }

  /** Children of a collection; in a data/raw collection, only datasets that are committed. */
  async list(path: string): Promise<string[]> {
    return this.call(async () => {
      const prefix = `${this.key(path)}/`;
      const names: string[] = [];
      for await (const page of this.pages(prefix, '/')) {
        for (const common of page.CommonPrefixes ?? [])
          names.push(common.Prefix!.slice(prefix.length, -1));
        for (const object of page.Contents ?? []) names.push(object.Key!.slice(prefix.length));
      }
      if (!/\/data\/raw$/.test(path)) return names;
      const committed = await mapLimit(names, LIST_CONCURRENCY, (name) =>
        this.objectExists(this.key(datasetCommitObject(`${path}/${name}`))),
      );
      return names.filter((_, i) => committed[i]);
    });
  }

  async readObject(path: string, range?: ByteRange): Promise<Buffer | null> {
    return this.call(async () => {
      try {
        const answer = await this.client.send(
          new GetObjectCommand({
            Bucket: this.bucket,
            Key: this.key(path),
            ...(range ? { Range: `bytes=${range.start}-${range.start + range.length - 1}` } : {}),
          }),
        );
        return Buffer.from(await answer.Body!.transformToByteArray());
      } catch (error) {
        if (isNotFound(error) || (error as { name?: string }).name === 'NoSuchKey') return null;
        // A range starting at or past the end (RFC 9110: 416): the object has no bytes there.
        if (range && statusOf(error) === 416) return Buffer.alloc(0);
        throw error;
      }
    });
  }

  /** S3 has no directories: a collection exists through the objects in it. */
  async ensureCollection(): Promise<void> {}

  /**
   * With `adopt`, the journals of the earlier areas that staged the same target are read (the
   * first area's entry of a path wins) and every object they name is confirmed from a listing
   * (size and ETag; a HEAD where the listing does not show it): those are `inherited`. The
   * earlier areas are forgotten (record and journal, never their objects) by discardExcept,
   * once the new area's journal names what is kept.
   */
  async openStaging(
    id: string,
    target?: string,
    options: OpenStagingOptions = {},
  ): Promise<StagingArea> {
    if (target === undefined) throw new Error('an s3 staging area needs its target path');
    return this.call(async () => {
      await this.removeStaging(id);
      const adopted: string[] = [];
      const entries = new Map<string, JournalEntry>();
      for (const earlier of options.adopt ?? []) {
        if (earlier === id) continue;
        const record = await this.stagingRecord(earlier);
        if (record !== null && record.target !== target) {
          await this.removeStaging(earlier);
          continue;
        }
        adopted.push(earlier);
        for (const entry of await this.readJournal(earlier))
          if (entry.etag !== undefined && !entries.has(entry.path)) entries.set(entry.path, entry);
      }
      const record: StagingRecord = { target, created: new Date().toISOString() };
      await this.putSmall(this.stagingKey(id), JSON.stringify(record));
      const expected = new Map(
        [...entries.values()].map((entry) => {
          const key = this.key(`${target}/${entry.path}`);
          return [key, { key, size: entry.size, etag: entry.etag! }];
        }),
      );
      const stored = await this.stillStored(`${this.key(target)}/`, expected);
      const inherited = [...entries.values()].filter((entry) =>
        stored.has(this.key(`${target}/${entry.path}`)),
      );
      const area = new S3StagingArea(id, target, this, inherited, adopted);
      this.areas.set(id, area);
      return area;
    });
  }

  /**
   * Removes a staging area: its record and journal, and for a dataset not committed, every
   * object and multipart upload under the dataset's keys (the area's, written by this import's
   * attempts).
   */
  async removeStaging(id: string): Promise<void> {
    return this.call(async () => {
      this.areas.delete(id);
      const record = await this.stagingRecord(id);
      if (
        record !== null &&
        isDatasetPath(record.target) &&
        !(await this.objectExists(this.key(datasetCommitObject(record.target))))
      ) {
        await this.abortUploadsUnder(`${this.key(record.target)}/`);
        await this.deleteUnder(`${this.key(record.target)}/`);
      }
      await this.forgetStaging(id);
    });
  }

  /** An area's record and journal, never the objects it staged. */
  async forgetStaging(id: string): Promise<void> {
    await this.deleteUnder(`${this.stagingKey(id)}/`);
    await this.client.send(
      new DeleteObjectCommand({ Bucket: this.bucket, Key: this.stagingKey(id) }),
    );
  }

  /** Areas by their records, and any journal whose record is gone (so it can be removed). */
  async listStaging(): Promise<string[]> {
    return this.call(async () => {
      const prefix = this.key(`${STAGING_DIR}/`);
      const names = new Set<string>();
      for await (const page of this.pages(prefix, '/')) {
        for (const object of page.Contents ?? []) names.add(object.Key!.slice(prefix.length));
        for (const common of page.CommonPrefixes ?? [])
          names.add(common.Prefix!.slice(prefix.length, -1));
      }
      return [...names];
    });
  }

  private async stagingRecord(id: string): Promise<StagingRecord | null> {
    const raw = await this.readObject(`${STAGING_DIR}/${id}`);
    return raw === null ? null : (JSON.parse(raw.toString('utf8')) as StagingRecord);
  }

  /** Every entry of an area's journal segments, later segments overriding earlier ones. */
  private async readJournal(id: string): Promise<JournalEntry[]> {
    const keys: string[] = [];
    for await (const page of this.pages(`${this.stagingKey(id)}/`))
      for (const object of page.Contents ?? []) keys.push(object.Key!);
    const prefixLength = this.options.prefix.length;
    const texts = await mapLimit(keys.sort(), LIST_CONCURRENCY, async (key) =>
      ((await this.readObject(key.slice(prefixLength))) ?? Buffer.alloc(0)).toString('utf8'),
    );
    return parseJournal(texts.join(''));
  }

  /** The key of an area's journal segment (S3 has no append: one object per flush). */
  journalSegmentKey(id: string, sequence: number): string {
    return `${this.stagingKey(id)}/journal-${String(sequence).padStart(8, '0')}.jsonl`;
  }

  async writeJournalSegment(
    id: string,
    sequence: number,
    entries: readonly JournalEntry[],
  ): Promise<void> {
    await this.putSmall(this.journalSegmentKey(id, sequence), formatJournal(entries));
  }

  /**
   * Deletes every object under `prefix` whose key is not in `keep`; what dead attempts left
   * half-sent is resumed by the next upload of the same key (resumableUploadsUnder).
   */
  async deleteUnderExcept(
    prefix: string,
    keep: ReadonlySet<string>,
  ): Promise<Map<string, ResumableUpload>> {
    const doomed: string[] = [];
    for await (const page of this.pages(prefix))
      for (const object of page.Contents ?? [])
        if (!keep.has(object.Key!)) doomed.push(object.Key!);
    await this.deleteKeys(doomed, prefix);
    return this.resumableUploadsUnder(prefix, keep);
  }

  /**
   * Publishes by writing the area's deferred small objects, the commit object last. S3 servers
   * without conditional writes (Swift) cannot refuse a second writer of the same key: the
   * import's job lock guarantees one attempt per dataset, and the commit object is checked
   * absent right before it is written.
   */
  async publish(stagingId: string, path: string): Promise<void> {
    return this.call(async () => {
      const area = this.areas.get(stagingId);
      if (!area) throw new StagingLostError(stagingId);
      if (area.target !== path)
        throw new Error(`staging ${stagingId} was opened for ${area.target}, not ${path}`);
      const deferred = area.deferredObjects();
      const commit = deferred[deferred.length - 1];
      if (!commit) throw new Error(`staging ${stagingId} holds no commit object`);
      if (isDatasetPath(path) && `${path}/${commit.path}` !== datasetCommitObject(path))
        throw new Error(
          `a dataset is committed by ${datasetCommitObject(path)}, not ${commit.path}`,
        );
      await area.sync();
      await this.confirmListed(`${this.key(path)}/`, area.storedObjects());
      if (await this.objectExists(this.key(`${path}/${commit.path}`)))
        throw new TargetExistsError(path);
      for (const object of deferred) {
        let stored: StoredObject | undefined;
        const writer = this.writer(`${path}/${object.path}`, object.content.length, (s) => {
          stored = s;
        });
        await writer.write(object.content);
        await writer.commit();
        await this.confirmObject(stored!);
      }
      this.areas.delete(stagingId);
      // The area's own journal segments by name: no listing of its prefix on every publish.
      await this.deleteKeys(area.journalKeys(), `${this.stagingKey(stagingId)}/`);
      await this.client.send(
        new DeleteObjectCommand({ Bucket: this.bucket, Key: this.stagingKey(stagingId) }),
      );
      // Uploads of dead attempts that no removal reached; none of this attempt's is open now.
      if (isDatasetPath(path)) await this.abortUploadsUnder(`${this.key(path)}/`);
    });
  }

  /** An object store reports no free space; preflight's check passes. */
  async freeBytes(): Promise<number> {
    return Number.MAX_SAFE_INTEGER;
  }

  writer(
    path: string,
    size?: number,
    stored?: (object: StoredObject) => void,
    resume?: ResumableUpload,
  ): S3ObjectWriter {
    return new S3ObjectWriter(this.target, this.key(path), size, stored, resume);
  }

  /**
   * Confirms the size and ETag of every uploaded object from a listing of the prefix: one
   * request per 1,000 objects instead of a HEAD each. A listing may lag behind the objects (Swift
   * updates its container listings asynchronously when busy) or still show an earlier attempt's
   * object under the same key, so whatever it does not show as expected is read back with a HEAD,
   * and the object itself decides: missing or different, the dataset is not committed.
   */
  async confirmListed(prefix: string, expected: ReadonlyMap<string, StoredObject>): Promise<void> {
    const unlisted = await this.unlisted(prefix, expected);
    await mapLimit(unlisted, LIST_CONCURRENCY, (want) => this.confirmObject(want));
  }

  /** The keys of `expected` the server holds as expected (confirmListed without the throw). */
  private async stillStored(
    prefix: string,
    expected: ReadonlyMap<string, StoredObject>,
  ): Promise<Set<string>> {
    const unlisted = await this.unlisted(prefix, expected);
    const failed = new Set<string>();
    await mapLimit(unlisted, LIST_CONCURRENCY, (want) =>
      this.confirmObject(want).catch((error: unknown) => {
        if (!(error instanceof S3VerificationError)) throw error;
        failed.add(want.key);
      }),
    );
    return new Set([...expected.keys()].filter((key) => !failed.has(key)));
  }

  /** What a listing of `prefix` does not show as expected. */
  private async unlisted(
    prefix: string,
    expected: ReadonlyMap<string, StoredObject>,
  ): Promise<StoredObject[]> {
    const unconfirmed = new Map(expected);
    if (unconfirmed.size === 0) return [];
    for await (const page of this.pages(prefix)) {
      for (const listed of page.Contents ?? []) {
        const want = unconfirmed.get(listed.Key!);
        if (want && listed.Size === want.size && unquote(listed.ETag) === want.etag)
          unconfirmed.delete(listed.Key!);
      }
      if (unconfirmed.size === 0) return [];
    }
    return [...unconfirmed.values()];
  }

  /** Reads one object's size and ETag back: what the server holds is what was sent. */
  private async confirmObject(want: StoredObject): Promise<void> {
    let head;
    try {
      head = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: want.key }));
    } catch (error) {
      if (isNotFound(error)) throw new S3VerificationError(want.key, 'missing after its upload');
      throw error;
    }
    if (head.ContentLength !== want.size)
      throw new S3VerificationError(
        want.key,
        `holds ${head.ContentLength} bytes, ${want.size} sent`,
      );
    if (unquote(head.ETag) !== want.etag)
      throw new S3VerificationError(want.key, `ETag ${unquote(head.ETag)}, expected ${want.etag}`);
  }

  async stagingRecordExists(id: string): Promise<boolean> {
    return this.call(() => this.objectExists(this.stagingKey(id)));
  }

  /** Runs S3 calls, turning their failures into the storage interface's (asStorageError). */
  async call<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (error instanceof S3VerificationError) throw error;
      throw asStorageError(error, this.bucket);
    }
  }

  private stagingKey(id: string): string {
    if (!/^[A-Za-z0-9._~-]+$/.test(id) || id === '.' || id === '..')
      throw new Error(`not a staging id: ${id}`);
    return this.key(`${STAGING_DIR}/${id}`);
  }

  private async objectExists(key: string): Promise<boolean> {
    try {
      await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return true;
    } catch (error) {
      if (isNotFound(error)) return false;
      throw error;
    }
  }

  private async putSmall(key: string, content: string): Promise<void> {
    const body = Buffer.from(content);
    await this.target.put.put(
      this.bucket,
      key,
      body,
      createHash('md5').update(body).digest('base64'),
    );
  }

  private async *pages(
    prefix: string,
    delimiter?: string,
  ): AsyncGenerator<ListObjectsV2CommandOutput> {
    let token: string | undefined;
    do {
      const page = await this.client.send(
        new ListObjectsV2Command({
          Bucket: this.bucket,
          Prefix: prefix,
          Delimiter: delimiter,
          ContinuationToken: token,
        }),
      );
      yield page;
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }

  private async deleteUnder(prefix: string): Promise<void> {
    for await (const page of this.pages(prefix))
      await this.deleteKeys(
        (page.Contents ?? []).map((object) => object.Key!),
        prefix,
      );
  }

  private async deleteKeys(keys: readonly string[], prefix: string): Promise<void> {
    for (let i = 0; i < keys.length; i += DELETE_BATCH) {
      const answer = await this.client.send(
        new DeleteObjectsCommand({
          Bucket: this.bucket,
          Delete: {
            Objects: keys.slice(i, i + DELETE_BATCH).map((Key) => ({ Key })),
            Quiet: true,
          },
        }),
      );
      if (answer.Errors?.length)
        throw new Error(
          `s3 could not delete ${answer.Errors.length} staged object(s) under ${prefix}`,
        );
    }
  }

  async abortUploadsUnder(prefix: string): Promise<number> {
    const uploads = await this.uploadsUnder(prefix);
    for (const upload of uploads) await this.abortUpload(upload);
    return uploads.length;
  }

  /** Every open multipart upload under `prefix`, listed before any is touched. */
  private async uploadsUnder(prefix: string): Promise<OpenUpload[]> {
    const uploads: OpenUpload[] = [];
    let keyMarker: string | undefined;
    let uploadIdMarker: string | undefined;
    for (;;) {
      const page = await this.client.send(
        new ListMultipartUploadsCommand({
          Bucket: this.bucket,
          Prefix: prefix,
          KeyMarker: keyMarker,
          UploadIdMarker: uploadIdMarker,
        }),
      );
      for (const upload of page.Uploads ?? [])
        uploads.push({
          key: upload.Key!,
          uploadId: upload.UploadId!,
          initiated: upload.Initiated?.getTime() ?? 0,
        });
      if (!page.IsTruncated) return uploads;
      keyMarker = page.NextKeyMarker;
      uploadIdMarker = page.NextUploadIdMarker;
    }
  }

  private async abortUpload({ key, uploadId }: OpenUpload): Promise<void> {
    await this.client
      .send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: key, UploadId: uploadId }))
      .catch((error: unknown) => {
        if (!isNotFound(error)) throw error;
      });
  }

  /**
   * The open multipart uploads under `prefix` a new attempt can resume, by key: for each key not
   * in `complete` (whose object is kept whole), its newest upload with the parts the server lists
   * for it; every other upload is aborted.
   */
  async resumableUploadsUnder(
    prefix: string,
    complete: ReadonlySet<string>,
  ): Promise<Map<string, ResumableUpload>> {
    const newest = new Map<string, OpenUpload>();
    for (const upload of await this.uploadsUnder(prefix)) {
      const other = newest.get(upload.key);
      if (complete.has(upload.key)) await this.abortUpload(upload);
      else if (!other || upload.initiated > other.initiated) {
        if (other) await this.abortUpload(other);
        newest.set(upload.key, upload);
      } else await this.abortUpload(upload);
    }
    const resumable = new Map<string, ResumableUpload>();
    for (const upload of newest.values())
      resumable.set(upload.key, { uploadId: upload.uploadId, parts: await this.partsOf(upload) });
    return resumable;
  }

  /** The parts the server holds of an upload: size and ETag (the part's MD5), by number. */
  private async partsOf({ key, uploadId }: OpenUpload): Promise<Map<number, SentPart>> {
    const parts = new Map<number, SentPart>();
    let marker: string | undefined;
    for (;;) {
      const page = await this.client.send(
        new ListPartsCommand({
          Bucket: this.bucket,
          Key: key,
          UploadId: uploadId,
          PartNumberMarker: marker,
        }),
      );
      for (const part of page.Parts ?? [])
        parts.set(part.PartNumber!, { size: part.Size!, etag: unquote(part.ETag) });
      if (!page.IsTruncated) return parts;
      marker = page.NextPartNumberMarker;
    }
  }
}

interface OpenUpload {
  key: string;
  uploadId: string;
  initiated: number;
}

/**
 * One attempt's staging: files go to their final keys at once (invisible until the commit
 * object exists), small objects (the stored manifest, the provenance, submission.json) are kept
 * here and written by publish, in the order given, the last one being the commit object.
 */
class S3StagingArea implements StagingArea {
  readonly copyLanes = S3_COPY_LANES;
  readonly copyBufferBytes = S3_COPY_BUFFER_BYTES;
  readonly inherited: readonly StagedFile[];
  private readonly deferred: { path: string; content: Buffer }[] = [];
  /** Size and ETag of every object uploaded or kept, by key: publish confirms them from a listing. */
  private readonly stored = new Map<string, StoredObject>();
  /** Uploads earlier attempts left open, by key: the next upload of the key resumes its own. */
  private resumable = new Map<string, ResumableUpload>();
  private journalSegments = 0;

  constructor(
    readonly id: string,
    readonly target: string,
    private readonly storage: S3Storage,
    inherited: readonly JournalEntry[],
    /** Earlier areas whose journals were read: forgotten once this one's journal is written. */
    private readonly adopted: readonly string[],
  ) {
    this.inherited = inherited.map(stagedFileOf);
    for (const entry of inherited) {
      const key = storage.key(`${target}/${entry.path}`);
      this.stored.set(key, { key, size: entry.size, etag: entry.etag! });
    }
  }

  /**
   * This area's journal first names what is kept, then the earlier areas are forgotten and
   * every other object under the target is deleted (with the multipart uploads under it).
   */
  async discardExcept(keep: (path: string) => boolean): Promise<void> {
    await this.storage.call(async () => {
      const kept = this.inherited.filter((file) => keep(file.path));
      const keys = new Set(kept.map((file) => this.storage.key(`${this.target}/${file.path}`)));
      for (const key of [...this.stored.keys()]) if (!keys.has(key)) this.stored.delete(key);
      await this.writeJournal(kept);
      for (const earlier of this.adopted) await this.storage.forgetStaging(earlier);
      this.resumable = await this.storage.deleteUnderExcept(
        `${this.storage.key(this.target)}/`,
        keys,
      );
    });
  }

  /** Objects are durable once their upload returned: only the journal segment is written. */
  async record(files: readonly StagedFile[]): Promise<void> {
    if (files.length === 0) return;
    await this.storage.call(async () => {
      // An area forgotten underneath (adopted by another attempt) gets no journal of its own.
      await this.sync();
      await this.writeJournal(files);
    });
  }

  journalKeys(): string[] {
    return Array.from({ length: this.journalSegments }, (_, i) =>
      this.storage.journalSegmentKey(this.id, i),
    );
  }

  private async writeJournal(files: readonly StagedFile[]): Promise<void> {
    const entries = files.map((file): JournalEntry => {
      const stored = this.stored.get(this.storage.key(`${this.target}/${file.path}`));
      if (!stored) throw new Error(`staging ${this.id}: ${file.path} was not stored by this area`);
      return { ...file, etag: stored.etag };
    });
    await this.storage.writeJournalSegment(this.id, this.journalSegments++, entries);
  }

  async createObject(relativePath: string, size?: number): Promise<ObjectWriter> {
    const path = `${this.target}/${checkedRelative(relativePath)}`;
    const key = this.storage.key(path);
    const resume = this.resumable.get(key);
    this.resumable.delete(key);
    const writer = this.storage.writer(
      path,
      size,
      (object) => this.stored.set(object.key, object),
      resume,
    );
    return {
      write: (chunk) => this.storage.call(() => writer.write(chunk)),
      commit: () => this.storage.call(() => writer.commit()),
      abort: () => writer.abort(),
      suspend: () => writer.suspend(),
      get reusedBytes() {
        return writer.reusedBytes;
      },
    };
  }

  async writeSmallObject(relativePath: string, content: ObjectContent): Promise<void> {
    const pieces = [...contentPieces(content)];
    this.deferred.push({ path: checkedRelative(relativePath), content: Buffer.concat(pieces) });
  }

  /** S3 has no directories. */
  async createCollection(): Promise<void> {}

  /** Every object is durable once its upload returned; the area must still be this attempt's. */
  async sync(): Promise<void> {
    if (!(await this.storage.stagingRecordExists(this.id))) throw new StagingLostError(this.id);
  }

  deferredObjects(): readonly { path: string; content: Buffer }[] {
    return this.deferred;
  }

  storedObjects(): ReadonlyMap<string, StoredObject> {
    return this.stored;
  }
}

/** A relative key below the target: no empty, `.` or `..` segment (preflight refuses them too). */
function checkedRelative(path: string): string {
  if (path.split('/').some((segment) => segment === '' || segment === '.' || segment === '..'))
    throw new Error(`staging path escapes its area: ${path}`);
  return path;
}
