import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { createHash } from 'node:crypto';
import type { ObjectWriter } from '../storage-system';
import type { PartBufferPool, PooledBytes } from './part-buffer-pool';
import type { SignedPut } from '../../common/s3/signed-put';

export interface S3Target {
  client: S3Client;
  /** The client's single-request PutObject (whole objects: most of an import's requests). */
  put: SignedPut;
  bucket: string;
  /** The worker's part buffers; its partBytes is the multipart part size. */
  pool: PartBufferPool;
}

/** What an upload stored, as the server must list it: size and S3 ETag (unquoted). */
export interface StoredObject {
  key: string;
  size: number;
  etag: string;
}

/** The object was stored, but not as sent (size or ETag differ): never publish it. */
export class S3VerificationError extends Error {
  constructor(key: string, what: string) {
    super(`s3 object ${key}: ${what}`);
    this.name = 'S3VerificationError';
  }
}

/** A part the server holds of an open upload: its size and ETag (the MD5 of its bytes). */
export interface SentPart {
  size: number;
  etag: string;
}

/** An upload an earlier attempt left open, and the parts the server listed for it. */
export interface ResumableUpload {
  uploadId: string;
  parts: ReadonlyMap<number, SentPart>;
}

/** How an object is written; all optional. */
export interface S3WriterOptions {
  /** The expected size, when known: an object smaller than a part gets a buffer of its size. */
  size?: number;
  /** Hears the object's stored size and ETag once it is complete. */
  stored?: (object: StoredObject) => void;
  /**
   * An upload of this key an earlier attempt left open: each part whose size and MD5 are those
   * the server lists for the same part number is not sent again (the bytes are still read and
   * hashed, which is what proves them the same).
   */
  resume?: ResumableUpload;
  /**
   * Parts of this object uploading at once (default: as many as the pool lends). 1 for an
   * object written beside an import's files (its manifest, its commit object): each part is
   * sent before the next is filled, so the object holds one part buffer, not the pool's every
   * buffer, while the files' slabs need theirs.
   */
  partsInFlight?: number;
}

export const unquote = (etag: string | undefined): string =>
  (etag ?? '').replace(/"/g, '').toLowerCase();

/**
 * Writes one object: a single PutObject when it fits in one part, else a multipart upload whose
 * parts go up while the next is filled. Every request carries the Content-MD5 of its bytes (the
 * server refuses a body that does not match it) and every answer's ETag is compared with it.
 * The object's stored size and ETag (the MD5, or the MD5 of the parts' MD5s and their count) are
 * handed to `stored`, whose owner confirms them against the server's listing before the dataset
 * is committed (S3StagingArea.publish). Buffers come from the worker's PartBufferPool; the bytes are
 * copied once, from the caller's chunk into the part buffer, and hashed there.
 */
export class S3ObjectWriter implements ObjectWriter {
  private lent: PooledBytes | null = null;
  private filled = 0;
  private total = 0;
  private uploadId: string | null = null;
  private readonly partMd5s: Buffer[] = [];
  private readonly inFlight = new Set<Promise<void>>();
  private failure: unknown = null;
  /** Bytes of parts the server already held from an earlier attempt: not sent again. */
  reusedBytes = 0;

  private readonly partsInFlight: number;

  constructor(
    private readonly target: S3Target,
    private readonly key: string,
    private readonly options: S3WriterOptions = {},
  ) {
    this.partsInFlight = Math.max(1, options.partsInFlight ?? Infinity);
  }

  async write(chunk: Uint8Array): Promise<void> {
    let offset = 0;
    while (offset < chunk.length) {
      if (this.failure) throw this.failure;
      if (!this.lent) await this.takeBuffer(this.firstBufferBytes());
      const buffer = this.lent!.bytes;
      if (this.filled === buffer.length) {
        if (buffer.length < this.target.pool.partBytes) await this.growBuffer();
        else await this.sendPart();
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

  /**
   * Sends what is buffered as the last part and waits for every part, holding no buffer after:
   * commit() then only completes the multipart upload (a commit object published later). Only
   * for an object already past one part (a multipart upload).
   */
  async sendParts(): Promise<void> {
    if (this.uploadId === null) throw new Error(`s3 object ${this.key}: not a multipart upload`);
    try {
      if (this.filled > 0) await this.sendPart();
      await Promise.all(this.inFlight);
      if (this.failure) throw this.failure;
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

  /** Stops without aborting the upload: the parts the server confirmed are a later attempt's. */
  async suspend(): Promise<void> {
    await Promise.all(this.inFlight);
    this.releaseBuffer();
  }

  private firstBufferBytes(): number {
    const { partBytes } = this.target.pool;
    // One byte more than announced, so a file that grew is seen growing, not cut.
    return this.options.size !== undefined && this.options.size < partBytes
      ? Math.max(1, this.options.size + 1)
      : partBytes;
  }

  private async takeBuffer(bytes: number): Promise<void> {
    this.lent = await this.target.pool.take(bytes);
    this.filled = 0;
  }

  /**
   * The object outgrew the buffer sized to its announced size (the file grew): its bytes move to
   * a whole part buffer. The small buffer goes back before the wait, so writers growing at once
   * cannot hold every slab while each waits for a part.
   */
  private async growBuffer(): Promise<void> {
    const filled = this.filled;
    const kept = Buffer.from(this.lent!.bytes.subarray(0, filled));
    this.releaseBuffer();
    await this.takeBuffer(this.target.pool.partBytes);
    kept.copy(this.lent!.bytes, 0, 0, filled);
    this.filled = filled;
  }

  private releaseBuffer(): void {
    const lent = this.lent;
    this.lent = null;
    lent?.release();
  }

  /** Hands the full buffer to an upload, which gives it back to the pool when it has ended. */
  private async sendPart(): Promise<void> {
    const { client, bucket } = this.target;
    if (this.uploadId === null && this.options.resume) this.uploadId = this.options.resume.uploadId;
    if (this.uploadId === null) {
      const created = await client.send(
        new CreateMultipartUploadCommand({ Bucket: bucket, Key: this.key }),
      );
      this.uploadId = created.UploadId!;
    }
    const uploadId = this.uploadId;
    const lent = this.lent!;
    const body = lent.bytes.subarray(0, this.filled);
    this.lent = null;
    this.filled = 0;
    const md5 = createHash('md5').update(body).digest();
    this.partMd5s.push(md5);
    const partNumber = this.partMd5s.length;
    const sent = this.options.resume?.parts.get(partNumber);
    if (sent && sent.size === body.length && sent.etag === md5.toString('hex')) {
      this.reusedBytes += body.length;
      lent.release();
      return;
    }
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
        lent.release();
        this.inFlight.delete(upload);
      });
    this.inFlight.add(upload);
    // Uploads never reject (a failure is kept in `failure`): waiting here cannot throw.
    while (this.inFlight.size >= this.partsInFlight) await Promise.race(this.inFlight);
  }

  private async putWhole(): Promise<void> {
    const { put, bucket } = this.target;
    const body = this.lent ? this.lent.bytes.subarray(0, this.filled) : Buffer.alloc(0);
    const digest = createHash('md5').update(body).digest();
    const md5 = digest.toString('hex');
    const etag = await put.put(bucket, this.key, body, digest.toString('base64'));
    if (unquote(etag) !== md5)
      throw new S3VerificationError(this.key, 'stored with another ETag than the MD5 sent');
    this.options.stored?.({ key: this.key, size: this.total, etag: md5 });
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
    this.options.stored?.({
      key: this.key,
      size: this.total,
      etag: `${etag}-${this.partMd5s.length}`,
    });
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
