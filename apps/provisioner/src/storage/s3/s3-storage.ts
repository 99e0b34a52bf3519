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
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { createHash } from 'node:crypto';
import { mapLimit } from '../../common/map-limit';
import { datasetCommitObject, isDatasetPath } from '../storage-layout';
import {
  ObjectWriter,
  StagingArea,
  StagingLostError,
  StorageRefusedError,
  StorageSystem,
  TargetExistsError,
} from '../storage-system';
import { PartBufferPool } from './part-buffer-pool';
import {
  S3ObjectWriter,
  S3Target,
  S3VerificationError,
  StoredObject,
  unquote,
} from './s3-object-writer';

const STAGING_DIR = '.staging';
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
 * Refusals no retry can cure: a rejected credential or signature, no permission, no bucket.
 * Everything else (a server down, 5xx, a time-out) stays a plain error, which is retried.
 */
export function asStorageRefusal(error: unknown, bucket: string): unknown {
  const name = (error as { name?: string }).name ?? '';
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
  private readonly target: S3Target;
  private readonly areas = new Map<string, S3StagingArea>();

  constructor(
    private readonly client: S3Client,
    private readonly options: S3StorageOptions,
  ) {
    this.description = `s3://${options.bucket}/${options.prefix}`;
    this.target = {
      client,
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

  location(path: string): string {
    return `s3://${this.options.bucket}/${this.key(path)}`;
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

  async readObject(path: string): Promise<Buffer | null> {
    return this.call(async () => {
      try {
        const answer = await this.client.send(
          new GetObjectCommand({ Bucket: this.bucket, Key: this.key(path) }),
        );
        return Buffer.from(await answer.Body!.transformToByteArray());
      } catch (error) {
        if (isNotFound(error) || (error as { name?: string }).name === 'NoSuchKey') return null;
        throw error;
      }
    });
  }

  /** S3 has no directories: a collection exists through the objects in it. */
  async ensureCollection(): Promise<void> {}

  async openStaging(id: string, target?: string): Promise<StagingArea> {
    if (target === undefined) throw new Error('an s3 staging area needs its target path');
    return this.call(async () => {
      await this.removeStaging(id);
      const record: StagingRecord = { target, created: new Date().toISOString() };
      await this.putSmall(this.stagingKey(id), JSON.stringify(record));
      const area = new S3StagingArea(id, target, this);
      this.areas.set(id, area);
      return area;
    });
  }

  /**
   * Removes a staging area: its record, and for a dataset not committed, every object and
   * multipart upload under the dataset's keys (the area's, written by this import's attempts).
   */
  async removeStaging(id: string): Promise<void> {
    return this.call(async () => {
      this.areas.delete(id);
      const raw = await this.readObject(`${STAGING_DIR}/${id}`);
      if (raw === null) return;
      const record = JSON.parse(raw.toString('utf8')) as StagingRecord;
      if (
        isDatasetPath(record.target) &&
        !(await this.objectExists(this.key(datasetCommitObject(record.target))))
      ) {
        await this.abortUploadsUnder(`${this.key(record.target)}/`);
        await this.deleteUnder(`${this.key(record.target)}/`);
      }
      await this.client.send(
        new DeleteObjectCommand({ Bucket: this.bucket, Key: this.stagingKey(id) }),
      );
    });
  }

  async listStaging(): Promise<string[]> {
    return this.call(async () => {
      const prefix = this.key(`${STAGING_DIR}/`);
      const names: string[] = [];
      for await (const page of this.pages(prefix, '/'))
        for (const object of page.Contents ?? []) names.push(object.Key!.slice(prefix.length));
      return names;
    });
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

  writer(path: string, size?: number, stored?: (object: StoredObject) => void): S3ObjectWriter {
    return new S3ObjectWriter(this.target, this.key(path), size, stored);
  }

  /**
   * Confirms the size and ETag of every uploaded object from a listing of the prefix: one
   * request per 1,000 objects instead of a HEAD each. A listing may lag behind the objects (Swift
   * updates its container listings asynchronously when busy) or still show an earlier attempt's
   * object under the same key, so whatever it does not show as expected is read back with a HEAD,
   * and the object itself decides: missing or different, the dataset is not committed.
   */
  async confirmListed(prefix: string, expected: ReadonlyMap<string, StoredObject>): Promise<void> {
    const unconfirmed = new Map(expected);
    if (unconfirmed.size === 0) return;
    for await (const page of this.pages(prefix)) {
      for (const listed of page.Contents ?? []) {
        const want = unconfirmed.get(listed.Key!);
        if (want && listed.Size === want.size && unquote(listed.ETag) === want.etag)
          unconfirmed.delete(listed.Key!);
      }
      if (unconfirmed.size === 0) return;
    }
    await mapLimit([...unconfirmed.values()], LIST_CONCURRENCY, (want) => this.confirmObject(want));
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

  /** Runs S3 calls, turning refusals no retry can cure into StorageRefusedError. */
  async call<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (error instanceof S3VerificationError) throw error;
      throw asStorageRefusal(error, this.bucket);
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
    await this.client.send(
      new PutObjectCommand({
        Bucket: this.bucket,
        Key: key,
        Body: body,
        ContentMD5: createHash('md5').update(body).digest('base64'),
      }),
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
    for await (const page of this.pages(prefix)) {
      const keys = (page.Contents ?? []).map((object) => ({ Key: object.Key! }));
      for (let i = 0; i < keys.length; i += DELETE_BATCH) {
        const answer = await this.client.send(
          new DeleteObjectsCommand({
            Bucket: this.bucket,
            Delete: { Objects: keys.slice(i, i + DELETE_BATCH), Quiet: true },
          }),
        );
        if (answer.Errors?.length)
          throw new Error(
            `s3 could not delete ${answer.Errors.length} staged object(s) under ${prefix}`,
          );
      }
    }
  }

  async abortUploadsUnder(prefix: string): Promise<number> {
    let aborted = 0;
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
      for (const upload of page.Uploads ?? []) {
        await this.client
          .send(
            new AbortMultipartUploadCommand({
              Bucket: this.bucket,
              Key: upload.Key!,
              UploadId: upload.UploadId!,
            }),
          )
          .catch((error: unknown) => {
            if (!isNotFound(error)) throw error;
          });
        aborted++;
      }
      if (!page.IsTruncated) return aborted;
      keyMarker = page.NextKeyMarker;
      uploadIdMarker = page.NextUploadIdMarker;
    }
  }
}

/**
 * One attempt's staging: files go to their final keys at once (invisible until the commit
 * object exists), small objects (the stored manifest, the provenance, submission.json) are kept
 * here and written by publish, in the order given, the last one being the commit object.
 */
class S3StagingArea implements StagingArea {
  readonly copyLanes = S3_COPY_LANES;
  readonly copyBufferBytes = S3_COPY_BUFFER_BYTES;
  private readonly deferred: { path: string; content: Buffer }[] = [];
  /** Size and ETag of every object uploaded, by key: publish confirms them from a listing. */
  private readonly stored = new Map<string, StoredObject>();

  constructor(
    readonly id: string,
    readonly target: string,
    private readonly storage: S3Storage,
  ) {}

  async createObject(relativePath: string, size?: number): Promise<ObjectWriter> {
    const writer = this.storage.writer(
      `${this.target}/${checkedRelative(relativePath)}`,
      size,
      (object) => this.stored.set(object.key, object),
    );
    return {
      write: (chunk) => this.storage.call(() => writer.write(chunk)),
      commit: () => this.storage.call(() => writer.commit()),
      abort: () => writer.abort(),
    };
  }

  async writeSmallObject(relativePath: string, content: string | Uint8Array): Promise<void> {
    this.deferred.push({ path: checkedRelative(relativePath), content: Buffer.from(content) });
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
