import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { createHash } from 'node:crypto';
import type { ObjectWriter } from '../storage-system';
import type { ByteBudget } from './byte-budget';

export interface S3Target {
  client: S3Client;
  bucket: string;
  budget: ByteBudget;
  partBytes: number;
}

/** The object was stored, but not as sent (size or ETag differ): never publish it. */
export class S3VerificationError extends Error {
  constructor(key: string, what: string) {
    super(`s3 object ${key}: ${what}`);
    this.name = 'S3VerificationError';
  }
}

const unquote = (etag: string | undefined): string => (etag ?? '').replace(/"/g, '').toLowerCase();

/**
 * Writes one object: a single PutObject when it fits in one part, else a multipart upload whose
 * parts go up while the next is filled. Every request carries the Content-MD5 of its bytes (the
 * server refuses a body that does not match it); after the upload the object's size and ETag
 * (the MD5, or the MD5 of the parts' MD5s and their count) are read back and compared.
 * Buffers come from the process-wide ByteBudget.
 */
export class S3ObjectWriter implements ObjectWriter {
  private buffer: Buffer | null = null;
  private filled = 0;
  private total = 0;
  private uploadId: string | null = null;
  private readonly partMd5s: Buffer[] = [];
  private readonly inFlight = new Set<Promise<void>>();
  private failure: unknown = null;

  constructor(
    private readonly target: S3Target,
    private readonly key: string,
    /** The expected size, when known: an object smaller than a part gets a buffer of its size. */
    private readonly sizeHint?: number,
  ) {}

  async write(chunk: Uint8Array): Promise<void> {
    let offset = 0;
    while (offset < chunk.length) {
      if (this.failure) throw this.failure;
      if (!this.buffer) await this.takeBuffer(this.firstBufferBytes());
      const buffer = this.buffer!;
      if (this.filled === buffer.length) {
        if (buffer.length < this.target.partBytes) {
          await this.growBuffer();
          continue;
        }
        await this.sendPart();
        continue;
      }
      const n = Math.min(chunk.length - offset, buffer.length - this.filled);
      buffer.set(chunk.subarray(offset, offset + n), this.filled);
      this.filled += n;
      this.total += n;
      offset += n;
    }
  }

  async commit(): Promise<void> {
    try {
      if (this.uploadId === null) await this.putWhole();
      else await this.completeMultipart();
    } catch (error) {
      await this.abortUpload();
      throw error;
    } finally {
      this.releaseBuffer();
    }
  }

  async abort(): Promise<void> {
    await this.abortUpload();
    this.releaseBuffer();
  }

  private firstBufferBytes(): number {
    const { partBytes } = this.target;
    // One byte more than announced, so a file that grew is seen growing, not cut.
    return this.sizeHint !== undefined && this.sizeHint < partBytes
      ? Math.max(1, this.sizeHint + 1)
      : partBytes;
  }

  private async takeBuffer(bytes: number): Promise<void> {
    await this.target.budget.take(bytes);
    this.buffer = Buffer.allocUnsafe(bytes);
    this.filled = 0;
  }

  private async growBuffer(): Promise<void> {
    const old = this.buffer!;
    const filled = this.filled;
    await this.takeBuffer(this.target.partBytes);
    old.copy(this.buffer!, 0, 0, filled);
    this.filled = filled;
    this.target.budget.give(old.length);
  }

  private releaseBuffer(): void {
    if (this.buffer) this.target.budget.give(this.buffer.length);
    this.buffer = null;
  }

  /** Hands the full buffer to an upload (which gives its bytes back when done). */
  private async sendPart(): Promise<void> {
    const { client, bucket, budget } = this.target;
    if (this.uploadId === null) {
      const created = await client.send(
        new CreateMultipartUploadCommand({ Bucket: bucket, Key: this.key }),
      );
      this.uploadId = created.UploadId!;
    }
    const body = this.buffer!.subarray(0, this.filled);
    const owned = this.buffer!;
    this.buffer = null;
    const md5 = createHash('md5').update(body).digest();
    this.partMd5s.push(md5);
    const partNumber = this.partMd5s.length;
    const uploadId = this.uploadId;
    const upload = client
      .send(
        new UploadPartCommand({
          Bucket: bucket,
          Key: this.key,
          UploadId: uploadId,
          PartNumber: partNumber,
          Body: body,
          ContentLength: body.length,
          ContentMD5: md5.toString('base64'),
        }),
      )
      .then((answer) => {
        if (unquote(answer.ETag) !== md5.toString('hex'))
          throw new S3VerificationError(this.key, `part ${partNumber} stored with another ETag`);
      })
      .catch((error: unknown) => {
        this.failure ??= error;
      })
      .finally(() => {
        budget.give(owned.length);
        this.inFlight.delete(upload);
      });
    this.inFlight.add(upload);
  }

  private async putWhole(): Promise<void> {
    const { client, bucket } = this.target;
    const body = this.buffer ? this.buffer.subarray(0, this.filled) : Buffer.alloc(0);
    const md5 = createHash('md5').update(body).digest();
    const answer = await client.send(
      new PutObjectCommand({
        Bucket: bucket,
        Key: this.key,
        Body: body,
        ContentLength: body.length,
        ContentMD5: md5.toString('base64'),
      }),
    );
    if (unquote(answer.ETag) !== md5.toString('hex'))
      throw new S3VerificationError(this.key, 'stored with another ETag than the MD5 sent');
    await this.confirm(md5.toString('hex'));
  }

  private async completeMultipart(): Promise<void> {
    if (this.filled > 0) await this.sendPart();
    await Promise.all(this.inFlight);
    if (this.failure) throw this.failure;
    const { client, bucket } = this.target;
    await client.send(
      new CompleteMultipartUploadCommand({
        Bucket: bucket,
        Key: this.key,
        UploadId: this.uploadId!,
        MultipartUpload: {
          Parts: this.partMd5s.map((md5, i) => ({
            PartNumber: i + 1,
            ETag: `"${md5.toString('hex')}"`,
          })),
        },
      }),
    );
    this.uploadId = null;
    const etag = createHash('md5').update(Buffer.concat(this.partMd5s)).digest('hex');
    await this.confirm(`${etag}-${this.partMd5s.length}`);
  }

  /** Reads the stored object's size and ETag back: what the server holds is what was sent. */
  private async confirm(etag: string): Promise<void> {
    const { client, bucket } = this.target;
    const head = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: this.key }));
    if (head.ContentLength !== this.total)
      throw new S3VerificationError(
        this.key,
        `holds ${head.ContentLength} bytes, ${this.total} sent`,
      );
    if (unquote(head.ETag) !== etag)
      throw new S3VerificationError(this.key, `ETag ${unquote(head.ETag)}, expected ${etag}`);
  }

  private async abortUpload(): Promise<void> {
    await Promise.all(this.inFlight);
    if (this.uploadId === null) return;
    const { client, bucket } = this.target;
    const uploadId = this.uploadId;
    this.uploadId = null;
    // Best effort: an upload left behind is aborted when the import's staging is removed.
    await client
      .send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: this.key, UploadId: uploadId }))
      .catch(() => undefined);
  }
}
