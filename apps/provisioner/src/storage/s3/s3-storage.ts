import { S3Client } from '@aws-sdk/client-s3';
import { datasetCommitObject, isDatasetPath } from '../storage-layout';
import {
  type ByteRange,
  ByteSource,
  OpenStagingOptions,
  StagingArea,
  StagingLostError,
  StorageSystem,
} from '../storage-system';
import { S3Bucket, type S3BucketOptions } from './s3-bucket';
import {
  listS3StagingAreas,
  openS3StagingArea,
  removeS3StagingArea,
  S3StagingArea,
} from './s3-staging-area';

/** S3's limit on a key, in UTF-8 bytes: a longer one is refused (KeyTooLongError). */
const MAX_KEY_BYTES = 1024;

export type S3StorageOptions = S3BucketOptions;

/**
 * Storage in an S3 bucket (any S3-compatible server), with the filesystem backend's layout under
 * S3_PREFIX. S3 has no rename, so a dataset is staged at its final keys and published by writing
 * its commit object (.provisioner/provenance.json) last; everything that reads storage treats a
 * dataset without it as absent. A staging record (<prefix>.staging/<id>) names the target, so a
 * dead attempt's objects and multipart uploads can be found and removed; nothing is deleted
 * under a dataset once its commit object exists (s3-staging-area.ts). The bucket's calls are
 * s3-bucket.ts's. See docs/decisions/s3-storage-backend.md.
 */
export class S3Storage implements StorageSystem {
  readonly description: string;
  readonly maxKeyBytes = MAX_KEY_BYTES;
  private readonly bucket: S3Bucket;
  private readonly areas = new Map<string, S3StagingArea>();

  constructor(client: S3Client, options: S3StorageOptions) {
    this.description = `s3://${options.bucket}/${options.prefix}`;
    this.bucket = new S3Bucket(client, options);
  }

  keyBytes(path: string): number {
    return Buffer.byteLength(this.bucket.key(path));
  }

  location(path: string): string {
    return `s3://${this.bucket.name}/${this.bucket.key(path)}`;
  }

  /** A GET of the object pre-signed for `seconds`: the store serves the bytes (and ranges). */
  async byteSource(path: string, seconds: number): Promise<ByteSource> {
    return { kind: 'url', url: await this.bucket.presignedGet(this.bucket.key(path), seconds) };
  }

  /** Readiness: the bucket exists and the credential may use it. */
  checkReady(): Promise<void> {
    return this.bucket.checkReady();
  }

  async exists(path: string): Promise<boolean> {
    return this.bucket.call(async () => {
      const key = this.bucket.key(path);
      if (isDatasetPath(path))
        return this.bucket.objectExists(this.bucket.key(datasetCommitObject(path)));
      if (await this.bucket.objectExists(key)) return true;
      return this.bucket.anyUnder(`${key}/`);
    });
  }

  /** Children of a collection; in a data/raw collection, only datasets that are committed. */
  async list(path: string): Promise<string[]> {
    return this.bucket.call(async () => {
      const names = await this.bucket.namesUnder(`${this.bucket.key(path)}/`);
      if (!/\/data\/raw$/.test(path)) return names;
      const committed = await this.bucket.existing(
        names.map((name) => this.bucket.key(datasetCommitObject(`${path}/${name}`))),
      );
      return names.filter((_, i) => committed[i]);
    });
  }

  async readObject(path: string, range?: ByteRange): Promise<Buffer | null> {
    return this.bucket.call(() => this.bucket.getObject(this.bucket.key(path), range));
  }

  /** S3 has no directories: a collection exists through the objects in it. */
  async ensureCollection(): Promise<void> {}

  /** With `adopt`, takes over what earlier areas recorded and still hold (openS3StagingArea). */
  async openStaging(
    id: string,
    target?: string,
    options: OpenStagingOptions = {},
  ): Promise<StagingArea> {
    if (target === undefined) throw new Error('an s3 staging area needs its target path');
    return this.bucket.call(async () => {
      this.areas.delete(id);
      const area = await openS3StagingArea(this.bucket, id, target, options.adopt ?? []);
      this.areas.set(id, area);
      return area;
    });
  }

  async removeStaging(id: string): Promise<void> {
    return this.bucket.call(async () => {
      this.areas.delete(id);
      await removeS3StagingArea(this.bucket, id);
    });
  }

  async listStaging(): Promise<string[]> {
    return this.bucket.call(() => listS3StagingAreas(this.bucket));
  }

  /** Publishes an area this storage opened, at the target it was opened for. */
  async publish(stagingId: string, path: string): Promise<void> {
    return this.bucket.call(async () => {
      const area = this.areas.get(stagingId);
      if (!area) throw new StagingLostError(stagingId);
      if (area.target !== path)
        throw new Error(`staging ${stagingId} was opened for ${area.target}, not ${path}`);
      await area.publish(() => this.areas.delete(stagingId));
    });
  }

  /** One PutObject over the existing object (S3's writes are atomic per object). */
  async replaceObject(path: string, content: Uint8Array): Promise<void> {
    return this.bucket.call(async () => {
      const key = this.bucket.key(path);
      if (!(await this.bucket.objectExists(key))) throw new Error(`${path} does not exist`);
      await this.bucket.putSmall(key, content);
    });
  }

  /** An object store reports no free space; preflight's check passes. */
  async freeBytes(): Promise<number> {
    return Number.MAX_SAFE_INTEGER;
  }
}
