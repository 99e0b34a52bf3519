import {
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { S3TestServer } from '../../../../test/support/s3-server';
import { mapLimit } from '../../src/common/map-limit';
import { DEFAULT_SOURCE_LIMITS } from '../../src/config/source-config';
import type { DatasetImportContext } from '../../src/import-pipeline/dataset-import-context';
import type { S3InboxSource } from '../../src/sources/s3-inbox/s3-inbox.source';
import type { StorageSystem } from '../../src/storage/storage-system';
import type { RemoteDataset, SourceSystem } from '../../src/sources/source-system';
import { DropzoneFixture, tempDir } from './dropzone-fixture';

/** The part size of putMultipart: 5 MiB, the least S3 allows for a part but the last. */
const MULTIPART_PART_BYTES = 5 * 1024 * 1024;

/** Stores `body` at `key` as a multipart upload of 5 MiB parts (as rclone and aws s3 cp do). */
export async function putMultipart(
  client: S3Client,
  bucket: string,
  key: string,
  body: Buffer,
): Promise<void> {
  const { UploadId } = await client.send(
    new CreateMultipartUploadCommand({ Bucket: bucket, Key: key }),
  );
  const parts = [];
  for (let start = 0, n = 1; start < body.length; start += MULTIPART_PART_BYTES, n++) {
    const part = await client.send(
      new UploadPartCommand({
        Bucket: bucket,
        Key: key,
        UploadId,
        PartNumber: n,
        Body: body.subarray(start, start + MULTIPART_PART_BYTES),
      }),
    );
    parts.push({ PartNumber: n, ETag: part.ETag });
  }
  await client.send(
    new CompleteMultipartUploadCommand({
      Bucket: bucket,
      Key: key,
      UploadId,
      MultipartUpload: { Parts: parts },
    }),
  );
}

/** PUTs in flight when a tree is uploaded. */
const PUT_CONCURRENCY = 32;

/**
 * An S3 inbox for tests: the drop zone's tree written by a DropzoneFixture (`local`), then
 * uploaded as keys under `prefix` of a bucket on the test's S3 server, as a submitter would;
 * `put` and `remove` write keys no directory could hold, or change them mid-import.
 */
export class S3InboxFixture {
  readonly local = new DropzoneFixture(tempDir('s3-inbox'));

  constructor(
    readonly server: S3TestServer,
    readonly client: S3Client,
    readonly bucket: string,
    readonly prefix: string,
  ) {}

  /**
   * Uploads what `local` holds under `path` ('' for all of it): each file as its key. On the
   * local Swift, the files are stored by its `ingest` (seconds for 10,000, where a PUT each took
   * a minute); on another server (S3_TEST_ENDPOINT), PUT one by one.
   */
  async upload(path = ''): Promise<void> {
    if (this.server.ingest) {
      this.server.ingest(
        this.bucket,
        `${this.prefix}${path ? `${path}/` : ''}`,
        join(this.local.root, path),
      );
      return;
    }
    const files: string[] = [];
    const walk = (relative: string) => {
      for (const entry of readdirSync(join(this.local.root, relative), { withFileTypes: true })) {
        const child = relative ? `${relative}/${entry.name}` : entry.name;
        if (entry.isDirectory()) walk(child);
        else files.push(child);
      }
    };
    walk(path);
    await mapLimit(files, PUT_CONCURRENCY, (file) =>
      this.put(file, readFileSync(join(this.local.root, file))),
    );
  }

  async put(path: string, body: string | Buffer): Promise<void> {
    await this.client.send(
      // The length said: the SDK takes an empty body for a stream of unknown length, and warns.
      new PutObjectCommand({
        Bucket: this.bucket,
        Key: `${this.prefix}${path}`,
        Body: body,
        ContentLength: Buffer.byteLength(body),
      }),
    );
  }

  async remove(path: string): Promise<void> {
    await this.client.send(
      new DeleteObjectCommand({ Bucket: this.bucket, Key: `${this.prefix}${path}` }),
    );
  }

  /** The SOURCES entry of this inbox; `extra` adds or overrides settings. */
  source(name = 'inbox', extra: Record<string, unknown> = {}): Record<string, unknown> {
    return {
      name,
      type: 's3',
      endpoint: this.server.endpoint,
      bucket: this.bucket,
      prefix: this.prefix,
      region: this.server.region,
      force_path_style: true,
      access_key_id: this.server.accessKeyId,
      secret_access_key: this.server.secretAccessKey,
      ...extra,
    };
  }
}

/**
 * The inbox source with `before` awaited before each payload object is read: how a test lands a
 * change of the inbox (an object overwritten, deleted, the server frozen) in the middle of an
 * import, between two files. With `storeClockAheadMs`, the payload's last-modified times are
 * those of a store whose clock is that far ahead of the worker's.
 */
export function hookedInbox(
  source: S3InboxSource,
  before: (path: string) => Promise<void>,
  { storeClockAheadMs = 0 }: { storeClockAheadMs?: number } = {},
): SourceSystem {
  return Object.assign(Object.create(source) as S3InboxSource, {
    remoteDataset: (id: string): RemoteDataset => {
      const dataset = source.remoteDataset(id);
      return {
        hasMarker: () => dataset.hasMarker(),
        readChunks: (name, rules, onChunk) => dataset.readChunks(name, rules, onChunk),
        walkPayload: (onObject, onProblem) =>
          dataset.walkPayload(
            (object) =>
              onObject({ ...object, lastModifiedMs: object.lastModifiedMs + storeClockAheadMs }),
            onProblem,
          ),
        copySource: (path) => dataset.copySource(path),
        read: (path, etag, size) =>
          (async function* () {
            await before(path);
            yield* dataset.read(path, etag, size);
          })(),
      };
    },
  });
}

/** One attempt of the import of `datasetId` from `source`, as the worker would run it. */
export function inboxImportContext(
  source: SourceSystem,
  storage: StorageSystem,
  datasetId: string,
  extra: Partial<DatasetImportContext> = {},
): DatasetImportContext {
  return {
    importId: `inbox-dataset-${datasetId}`,
    attempt: 1,
    queuedAt: null,
    source,
    storage,
    datasetId,
    versions: { provisioner: 'test' },
    reportProgress: () => Promise.resolve(),
    sourceLimits: DEFAULT_SOURCE_LIMITS,
    ...extra,
  };
}
