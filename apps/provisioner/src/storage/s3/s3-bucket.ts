import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  UploadPartCopyCommand,
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
import { SourceChangedError } from '../../sources/source-system';
import {
  type ByteRange,
  type ServerSideCopy,
  StorageRefusedError,
  StorageUnavailableError,
} from '../storage-system';
import { PartBufferPool } from './part-buffer-pool';
import { signedPutOf } from '../../common/s3/s3-client';
import { s3FailureKind, s3FailureName, s3Status } from '../../common/s3/s3-errors';
import {
  ResumableUpload,
  S3ObjectWriter,
  S3Target,
  S3VerificationError,
  S3WriterOptions,
  SentPart,
  StoredObject,
  unquote,
} from './s3-object-writer';

const LIST_CONCURRENCY = 16;
/** S3's most parts in one multipart upload. */
const MAX_PARTS = 10_000;
/** UploadPartCopy requests of one object in flight: the server moves the bytes. */
const COPY_PART_CONCURRENCY = 4;
const DELETE_BATCH = 1000;

/**
 * Objects expected under a prefix, in the order of their names below it (as JavaScript compares
 * strings): what a staging area stored, read by position.
 */
export interface SortedObjects {
  readonly count: number;
  name(k: number): string;
  size(k: number): number;
  etag(k: number): string;
}

function storedAt(prefix: string, expected: SortedObjects, k: number): StoredObject {
  return { key: `${prefix}${expected.name(k)}`, size: expected.size(k), etag: expected.etag(k) };
}

/** An S3 multipart object's ETag: the MD5 of its parts' MD5s, then `-<parts>`. */
function isMultipartEtag(etag: string): boolean {
  return /-\d+$/.test(etag);
}

export interface S3BucketOptions {
  bucket: string;
  /**
   * The store the bucket is in (its endpoint URL, or `aws:<region>`): a server-side copy is made
   * only from a bucket of the same store. Absent: none is.
   */
  store?: string;
  /** Key prefix, '' or ending in '/'. */
  prefix: string;
  partBytes: number;
  /** Upload buffers of the whole process, in parts: the memory bound is this × partBytes. */
  uploadConcurrency: number;
}

const statusOf = s3Status;

const isNotFound = (error: unknown): boolean => {
  const name = (error as { name?: string }).name;
  return statusOf(error) === 404 && name !== 'NoSuchBucket';
};

/**
 * S3 failures as the storage interface names them (s3FailureKind): refusals no retry can cure
 * become StorageRefusedError; the endpoint not answering becomes StorageUnavailableError, which
 * is retried; anything else stays as it is.
 */
export function asStorageError(error: unknown, bucket: string): unknown {
  const kind = s3FailureKind(error);
  if (kind === 'refused')
    return new StorageRefusedError(
      `s3 bucket ${bucket} refused the request (${s3FailureName(error)})`,
    );
  if (kind === 'unavailable')
    return new StorageUnavailableError(
      `s3 endpoint unavailable for bucket ${bucket}: ${(error as Error).message || s3FailureName(error)}`,
    );
  return error;
}

interface OpenUpload {
  key: string;
  uploadId: string;
  initiated: number;
}

/**
 * One bucket under a key prefix, as the storage and its staging areas use it: objects by key
 * (read, written whole or in parts, deleted), listings page by page, the confirmation of what an
 * upload stored against a listing, and the multipart uploads dead attempts left open (aborted,
 * or resumed by the next upload of the same key). Knows nothing of datasets or staging.
 */
export class S3Bucket {
  private readonly target: S3Target;
  /** This store refused a copy's condition on a multipart source that had not changed. */
  private refusesMultipartCopyConditions = false;

  constructor(
    private readonly client: S3Client,
    private readonly options: S3BucketOptions,
  ) {
    this.target = {
      client,
      put: signedPutOf(client),
      bucket: options.bucket,
      pool: new PartBufferPool(options.partBytes, options.uploadConcurrency),
    };
  }

  get name(): string {
    return this.options.bucket;
  }

  get store(): string | undefined {
    return this.options.store;
  }

  /**
   * Copies an object of the same store to `key` server-side: one CopyObject up to the part size,
   * else a multipart upload of UploadPartCopy parts, every request only for the version with the
   * source's ETag (x-amz-copy-source-if-match). A source changed or gone: SourceChangedError.
   * Returns what was stored, for publish to confirm like an upload's; null when the store
   * refuses the condition on a source that still has that ETag (it cannot copy it).
   */
  async copyFrom(key: string, source: ServerSideCopy): Promise<StoredObject | null> {
    if (!this.copiesConditionally(source.etag)) return null;
    const copySource = `${source.bucket}/${source.key.split('/').map(encodeURIComponent).join('/')}`;
    const ifMatch = `"${source.etag}"`;
    const partBytes = Math.max(this.options.partBytes, Math.ceil(source.size / MAX_PARTS));
    try {
      if (source.size <= partBytes) {
        const answer = await this.client.send(
          new CopyObjectCommand({
            Bucket: this.name,
            Key: key,
            CopySource: copySource,
            CopySourceIfMatch: ifMatch,
          }),
        );
        source.onAccepted?.();
        return { key, size: source.size, etag: unquote(answer.CopyObjectResult?.ETag) };
      }
      return await this.copyInParts(key, source, copySource, ifMatch, partBytes);
    } catch (error) {
      const status = statusOf(error);
      if (status === 412 && (await this.stillListed(source))) {
        // Swift's s3api (2.30, s3request.py check_copy_source) checks the copy's condition
        // against the Swift ETag of a multipart object's manifest, never its S3 one: every such
        // copy is refused, so this store's multipart sources are not copied server-side again.
        if (isMultipartEtag(source.etag)) this.refusesMultipartCopyConditions = true;
        return null;
      }
      if (
        status === 412 ||
        (status === 404 && (error as { name?: string }).name !== 'NoSuchBucket')
      )
        throw new SourceChangedError(
          source.key,
          status === 412 ? 'its ETag is no longer the one listed' : 'it is gone',
        );
      throw error;
    }
  }

  /**
   * Whether a server-side copy of a source with this ETag can be made on the condition of it:
   * not for a multipart source once this store has refused the condition on one.
   */
  copiesConditionally(etag: string): boolean {
    return !(this.refusesMultipartCopyConditions && isMultipartEtag(etag));
  }

  /** Whether the copy's source still has the ETag listed (a HEAD; false when it is gone). */
  private async stillListed(source: ServerSideCopy): Promise<boolean> {
    try {
      const head = await this.client.send(
        new HeadObjectCommand({ Bucket: source.bucket, Key: source.key }),
      );
      return unquote(head.ETag) === source.etag;
    } catch {
      return false;
    }
  }

  private async copyInParts(
    key: string,
    source: ServerSideCopy,
    copySource: string,
    ifMatch: string,
    partBytes: number,
  ): Promise<StoredObject> {
    const created = await this.client.send(
      new CreateMultipartUploadCommand({ Bucket: this.name, Key: key }),
    );
    const uploadId = created.UploadId!;
    try {
      const count = Math.ceil(source.size / partBytes);
      const parts = await mapLimit(
        Array.from({ length: count }, (_, i) => i),
        COPY_PART_CONCURRENCY,
        async (i) => {
          const start = i * partBytes;
          const end = Math.min(source.size, start + partBytes) - 1;
          const answer = await this.client.send(
            new UploadPartCopyCommand({
              Bucket: this.name,
              Key: key,
              UploadId: uploadId,
              PartNumber: i + 1,
              CopySource: copySource,
              CopySourceIfMatch: ifMatch,
              CopySourceRange: `bytes=${start}-${end}`,
            }),
          );
          source.onAccepted?.();
          return { PartNumber: i + 1, ETag: answer.CopyPartResult!.ETag! };
        },
      );
      const done = await this.client.send(
        new CompleteMultipartUploadCommand({
          Bucket: this.name,
          Key: key,
          UploadId: uploadId,
          MultipartUpload: { Parts: parts },
        }),
      );
      return { key, size: source.size, etag: unquote(done.ETag) };
    } catch (error) {
      await this.client
        .send(new AbortMultipartUploadCommand({ Bucket: this.name, Key: key, UploadId: uploadId }))
        .catch(() => undefined);
      throw error;
    }
  }

  /** The multipart part size: an object past it is uploaded in parts. */
  get partBytes(): number {
    return this.options.partBytes;
  }

  get prefix(): string {
    return this.options.prefix;
  }

  /** The key of a logical path: the path under the prefix. */
  key(path: string): string {
    return `${this.options.prefix}${path}`;
  }

  /** Runs S3 calls, turning their failures into the storage interface's (asStorageError). */
  async call<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (error instanceof S3VerificationError) throw error;
      throw asStorageError(error, this.name);
    }
  }

  /** A GET of the object pre-signed for `seconds`. */
  presignedGet(key: string, seconds: number): Promise<string> {
    const command = new GetObjectCommand({ Bucket: this.name, Key: key });
    return getSignedUrl(this.client, command, { expiresIn: seconds });
  }

  /** Readiness: the bucket exists and the credential may use it. */
  async checkReady(): Promise<void> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.name }));
    } catch (error) {
      const status = statusOf(error);
      if (status === 404) throw new Error(`s3 bucket ${this.name} does not exist`);
      if (status === 403 || status === 401)
        throw new Error(`s3 bucket ${this.name}: the credential was refused (HTTP ${status})`);
      throw new Error(
        `s3 endpoint does not answer for bucket ${this.name}: ${(error as Error).message}`,
      );
    }
  }

  async objectExists(key: string): Promise<boolean> {
    try {
      await this.client.send(new HeadObjectCommand({ Bucket: this.name, Key: key }));
      return true;
    } catch (error) {
      if (isNotFound(error)) return false;
      throw error;
    }
  }

  /** Whether any object's key starts with `prefix`. */
  async anyUnder(prefix: string): Promise<boolean> {
    const page = await this.client.send(
      new ListObjectsV2Command({ Bucket: this.name, Prefix: prefix, MaxKeys: 1 }),
    );
    return (page.KeyCount ?? 0) > 0;
  }

  /** An object's bytes (with `range`, those), or null when there is no such object. */
  async getObject(key: string, range?: ByteRange): Promise<Buffer | null> {
    try {
      const answer = await this.client.send(
        new GetObjectCommand({
          Bucket: this.name,
          Key: key,
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
  }

  /** A small object in one request, with its Content-MD5. */
  async putSmall(key: string, content: string | Uint8Array): Promise<void> {
    const body = typeof content === 'string' ? Buffer.from(content) : Buffer.from(content);
    await this.target.put.put(
      this.name,
      key,
      body,
      createHash('md5').update(body).digest('base64'),
    );
  }

  writer(key: string, options: S3WriterOptions = {}): S3ObjectWriter {
    return new S3ObjectWriter(this.target, key, options);
  }

  async deleteObject(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.name, Key: key }));
  }

  async *pages(prefix: string, delimiter?: string): AsyncGenerator<ListObjectsV2CommandOutput> {
    let token: string | undefined;
    do {
      const page = await this.client.send(
        new ListObjectsV2Command({
          Bucket: this.name,
          Prefix: prefix,
          Delimiter: delimiter,
          ContinuationToken: token,
        }),
      );
      yield page;
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }

  /** The names one level below `prefix` (the common prefixes, then the objects). */
  async namesUnder(prefix: string): Promise<string[]> {
    const names: string[] = [];
    for await (const page of this.pages(prefix, '/')) {
      for (const common of page.CommonPrefixes ?? [])
        names.push(common.Prefix!.slice(prefix.length, -1));
      for (const object of page.Contents ?? []) names.push(object.Key!.slice(prefix.length));
    }
    return names;
  }

  /**
   * Every object under `prefix` in key order, handed to `onBody` one at a time (read
   * LIST_CONCURRENCY at a time): a million files' journal segments are never held at once.
   */
  async eachObjectUnder(prefix: string, onBody: (body: Buffer) => void): Promise<void> {
    const keys: string[] = [];
    for await (const page of this.pages(prefix))
      for (const object of page.Contents ?? []) keys.push(object.Key!);
    keys.sort();
    for (let i = 0; i < keys.length; i += LIST_CONCURRENCY) {
      const bodies = await Promise.all(
        keys.slice(i, i + LIST_CONCURRENCY).map((key) => this.getObject(key)),
      );
      for (const body of bodies) if (body !== null) onBody(body);
    }
  }

  /** Whether each of `keys` names an object, LIST_CONCURRENCY at a time. */
  existing(keys: readonly string[]): Promise<boolean[]> {
    return mapLimit(keys, LIST_CONCURRENCY, (key) => this.objectExists(key));
  }

  async deleteUnder(prefix: string): Promise<void> {
    for await (const page of this.pages(prefix))
      await this.deleteKeys(
        (page.Contents ?? []).map((object) => object.Key!),
        prefix,
      );
  }

  async deleteKeys(keys: readonly string[], prefix: string): Promise<void> {
    for (let i = 0; i < keys.length; i += DELETE_BATCH) {
      const answer = await this.client.send(
        new DeleteObjectsCommand({
          Bucket: this.name,
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

  /**
   * Deletes every object under `prefix` that `keep` refuses (it sees each as listed: key, size,
   * ETag), page by page (a listing continues after the last key it gave, so deleting what it
   * gave changes nothing ahead).
   */
  async deleteUnderExcept(prefix: string, keep: (object: StoredObject) => boolean): Promise<void> {
    for await (const page of this.pages(prefix)) {
      const doomed: string[] = [];
      for (const object of page.Contents ?? []) {
        const listed = { key: object.Key!, size: object.Size ?? 0, etag: unquote(object.ETag) };
        if (!keep(listed)) doomed.push(listed.key);
      }
      await this.deleteKeys(doomed, prefix);
    }
  }

  /**
   * Confirms the size and ETag of every uploaded object from a listing of the prefix: one
   * request per 1,000 objects instead of a HEAD each, the listing and `expected` (both in the
   * order of the names) compared as they go, so nothing per object is built. A listing may lag
   * behind the objects (Swift updates its container listings asynchronously when busy), still
   * show an earlier attempt's object under the same key, or order a rare character otherwise
   * (UTF-8 bytes against UTF-16 code units), so whatever it does not show as expected is read
   * back with a HEAD, and the object itself decides: missing or different, the dataset is not
   * committed.
   */
  async confirmListed(prefix: string, expected: SortedObjects): Promise<void> {
    const unlisted = await this.unlisted(prefix, expected);
    await mapLimit(unlisted, LIST_CONCURRENCY, (k) =>
      this.confirmObject(storedAt(prefix, expected, k)),
    );
  }

  /**
   * The positions of `expected` the server does not hold as expected (confirmListed without the
   * throw), as a flag each.
   */
  async notStored(prefix: string, expected: SortedObjects): Promise<Uint8Array> {
    const failed = new Uint8Array(expected.count);
    const unlisted = await this.unlisted(prefix, expected);
    await mapLimit(unlisted, LIST_CONCURRENCY, (k) =>
      this.confirmObject(storedAt(prefix, expected, k)).catch((error: unknown) => {
        if (!(error instanceof S3VerificationError)) throw error;
        failed[k] = 1;
      }),
    );
    return failed;
  }

  /** The positions of `expected` a listing of `prefix` does not show as expected, in one pass. */
  private async unlisted(prefix: string, expected: SortedObjects): Promise<number[]> {
    const missing: number[] = [];
    const count = expected.count;
    let k = 0;
    let name = count > 0 ? expected.name(0) : '';
    pages: for await (const page of this.pages(prefix)) {
      for (const listed of page.Contents ?? []) {
        if (k === count) break pages;
        const at = listed.Key!.slice(prefix.length);
        while (name < at) {
          missing.push(k);
          if (++k === count) break pages;
          name = expected.name(k);
        }
        if (name !== at) continue;
        if (listed.Size !== expected.size(k) || unquote(listed.ETag) !== expected.etag(k))
          missing.push(k);
        if (++k < count) name = expected.name(k);
      }
      if (k === count) break;
    }
    for (; k < count; k++) missing.push(k);
    return missing;
  }

  /** Reads one object's size and ETag back: what the server holds is what was sent. */
  async confirmObject(want: StoredObject): Promise<void> {
    let head;
    try {
      head = await this.client.send(new HeadObjectCommand({ Bucket: this.name, Key: want.key }));
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
          Bucket: this.name,
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
      .send(new AbortMultipartUploadCommand({ Bucket: this.name, Key: key, UploadId: uploadId }))
      .catch((error: unknown) => {
        if (!isNotFound(error)) throw error;
      });
  }

  /**
   * The open multipart uploads under `prefix` a new attempt can resume, by key: for each key
   * `complete` refuses (an object kept whole has it), its newest upload with the parts the
   * server lists for it; every other upload is aborted.
   */
  async resumableUploadsUnder(
    prefix: string,
    complete: (key: string) => boolean,
  ): Promise<Map<string, ResumableUpload>> {
    const newest = new Map<string, OpenUpload>();
    for (const upload of await this.uploadsUnder(prefix)) {
      const other = newest.get(upload.key);
      if (complete(upload.key)) await this.abortUpload(upload);
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
          Bucket: this.name,
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
