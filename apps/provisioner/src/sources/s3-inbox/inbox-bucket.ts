import {
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  type ListObjectsV2CommandOutput,
  S3Client,
} from '@aws-sdk/client-s3';
import { signedPutOf } from '../../common/s3/s3-client';
import type { SignedPut } from '../../common/s3/signed-put';
import { s3FailureKind, s3FailureName, s3Status } from '../../common/s3/s3-errors';
import { SourceChangedError, SourceUnavailableError } from '../source-system';
import {
  DEFAULT_RANGED_READS,
  type RangeAnswer,
  ReadAheadBudget,
  type RangedReadSettings,
  readInRanges,
} from './ranged-read';

/** One object as a listing shows it. */
export interface ListedObject {
  key: string;
  size: number;
  etag: string;
  lastModifiedMs: number;
}

const unquote = (etag: string | undefined): string => (etag ?? '').replace(/"/g, '').toLowerCase();

/**
 * Objects listed below this size are read whole in one GET signed by hand (SignedPut.getWhole)
 * rather than streamed through the SDK: small files cost the worker a request each, and the
 * SDK's CPU per request was as much as the store's own. Lanes × this is what they hold at once.
 */
export const WHOLE_READ_BELOW = 1024 * 1024;

const isMissing = (error: unknown): boolean =>
  s3Status(error) === 404 && (error as { name?: string }).name !== 'NoSuchBucket';

/**
 * The inbox bucket as its source reads it: listings page by page (ListObjectsV2, 1,000 keys a
 * page: a prefix of a million objects is never held whole), objects read whole within a cap or
 * streamed (only the version listed: If-Match), every failure as the sources name theirs. A
 * refused credential, a missing bucket or an endpoint that does not answer is
 * SourceUnavailableError with what the operator must check; an object changed or gone under a
 * read is SourceChangedError.
 */
export class InboxBucket {
  /** Small objects' reads (see stream). */
  private readonly signed: SignedPut;

  constructor(
    readonly source: string,
    private readonly client: S3Client,
    readonly bucket: string,
    /** '' or ending in '/'. */
    readonly prefix: string,
    private readonly ranged: RangedReadSettings = DEFAULT_RANGED_READS,
    /** The worker's, shared by every inbox (see ReadAheadBudget). */
    private readonly budget: ReadAheadBudget = ReadAheadBudget.of(ranged),
  ) {
    this.signed = signedPutOf(client);
  }

  key(path: string): string {
    return `${this.prefix}${path}`;
  }

  /** The source's error for an S3 failure (see the class). */
  private failure(error: unknown): unknown {
    if (error instanceof SourceChangedError || error instanceof SourceUnavailableError)
      return error;
    const kind = s3FailureKind(error);
    const name = s3FailureName(error);
    if (kind === 'refused')
      return new SourceUnavailableError(
        this.source,
        `s3 inbox ${this.bucket} refused the request (${name}): check the source's credentials and the bucket's policy`,
      );
    if (kind === 'unavailable')
      return new SourceUnavailableError(
        this.source,
        `s3 inbox ${this.bucket} does not answer: ${(error as Error).message || name}`,
      );
    return new SourceUnavailableError(
      this.source,
      `s3 inbox ${this.bucket} answered ${name}: ${(error as Error).message}`,
    );
  }

  private async call<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      throw this.failure(error);
    }
  }

  /** The pages of a listing of `prefix` (a path under the inbox prefix), in key order. */
  async *pages(path: string, delimiter?: string): AsyncGenerator<ListObjectsV2CommandOutput> {
    let token: string | undefined;
    do {
      const page = await this.call(() =>
        this.client.send(
          new ListObjectsV2Command({
            Bucket: this.bucket,
            Prefix: this.key(path),
            Delimiter: delimiter,
            ContinuationToken: token,
          }),
        ),
      );
      yield page;
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }

  /** Every object under `path`, page by page, with keys relative to `path`. */
  async *objects(path: string): AsyncGenerator<ListedObject[]> {
    const start = this.key(path).length;
    for await (const page of this.pages(path))
      yield (page.Contents ?? []).map((o) => ({
        key: o.Key!.slice(start),
        size: o.Size ?? 0,
        etag: unquote(o.ETag),
        lastModifiedMs: o.LastModified?.getTime() ?? 0,
      }));
  }

  /** The objects and the sub-prefixes ("folders") one level below `path`. */
  async level(path: string): Promise<{ objects: ListedObject[]; folders: string[] }> {
    const start = this.key(path).length;
    const objects: ListedObject[] = [];
    const folders: string[] = [];
    for await (const page of this.pages(path, '/')) {
      for (const common of page.CommonPrefixes ?? []) folders.push(common.Prefix!.slice(start, -1));
      for (const o of page.Contents ?? [])
        objects.push({
          key: o.Key!.slice(start),
          size: o.Size ?? 0,
          etag: unquote(o.ETag),
          lastModifiedMs: o.LastModified?.getTime() ?? 0,
        });
    }
    return { objects, folders };
  }

  /** Whether an object exists. */
  async exists(path: string): Promise<boolean> {
    return this.call(async () => {
      try {
        await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.key(path) }));
        return true;
      } catch (error) {
        if (isMissing(error)) return false;
        throw error;
      }
    });
  }

  /**
   * An object's bytes chunk by chunk, never more than `maxBytes` of them: 'read', null when it
   * does not exist, 'too_large' (with the size seen) when it is over the cap.
   */
  async readCapped(
    path: string,
    maxBytes: number,
    onChunk: (chunk: Buffer) => void,
  ): Promise<'read' | null | { tooLarge: number | string }> {
    return this.call(async () => {
      let answer;
      try {
        answer = await this.client.send(
          new GetObjectCommand({ Bucket: this.bucket, Key: this.key(path) }),
        );
      } catch (error) {
        if (isMissing(error) || (error as { name?: string }).name === 'NoSuchKey') return null;
        throw error;
      }
      const body = answer.Body as AsyncIterable<Uint8Array> & { destroy?: () => void };
      if ((answer.ContentLength ?? 0) > maxBytes) {
        body.destroy?.();
        return { tooLarge: answer.ContentLength! };
      }
      let total = 0;
      for await (const chunk of body) {
        total += chunk.length;
        if (total > maxBytes) {
          body.destroy?.();
          return { tooLarge: `more than ${maxBytes}` };
        }
        onChunk(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length));
      }
      return 'read';
    });
  }

  /** A whole object within `maxBytes` (see readCapped). */
  async readWhole(
    path: string,
    maxBytes: number,
  ): Promise<Buffer | null | { tooLarge: number | string }> {
    const chunks: Buffer[] = [];
    const outcome = await this.readCapped(path, maxBytes, (chunk) =>
      chunks.push(Buffer.from(chunk)),
    );
    return outcome === 'read' ? Buffer.concat(chunks) : outcome;
  }

  /**
   * The bytes of the version `etag` of an object (If-Match), as they arrive: SourceChangedError
   * when the object is another version or gone, before or while it is read. `size`, the size
   * listed, below WHOLE_READ_BELOW: the object is read whole in one hand-signed GET; from two
   * ranges on, in ranges with several GETs in flight (readInRanges), each with If-Match.
   */
  async *stream(
    path: string,
    etag: string,
    shownPath: string,
    size?: number,
  ): AsyncGenerator<Uint8Array> {
    if (size !== undefined && size < WHOLE_READ_BELOW) {
      yield await this.readListed(path, etag, shownPath);
      return;
    }
    if (size !== undefined && this.ranged.ranges > 1 && size >= 2 * this.ranged.rangeBytes) {
      yield* readInRanges(size, this.ranged, this.budget, (start, end, signal) =>
        this.getRange(path, etag, shownPath, { start, end, size }, signal),
      );
      return;
    }
    let answer;
    try {
      answer = await this.client.send(
        new GetObjectCommand({ Bucket: this.bucket, Key: this.key(path), IfMatch: `"${etag}"` }),
      );
    } catch (error) {
      throw this.readFailure(error, shownPath);
    }
    if (unquote(answer.ETag) !== etag)
      throw new SourceChangedError(shownPath, `ETag ${unquote(answer.ETag)}, listed ${etag}`);
    try {
      yield* answer.Body as AsyncIterable<Uint8Array>;
    } catch (error) {
      throw this.failure(error);
    }
  }

  /**
   * Bytes start..end of the version `etag` of an object of `size` bytes (If-Match, the answer's
   * ETag and Content-Range checked): SourceChangedError when it is another version, another size
   * or gone.
   */
  private async getRange(
    path: string,
    etag: string,
    shownPath: string,
    range: { start: number; end: number; size: number },
    signal: AbortSignal,
  ): Promise<RangeAnswer> {
    let answer;
    try {
      answer = await this.client.send(
        new GetObjectCommand({
          Bucket: this.bucket,
          Key: this.key(path),
          IfMatch: `"${etag}"`,
          Range: `bytes=${range.start}-${range.end}`,
        }),
        { abortSignal: signal },
      );
    } catch (error) {
      throw this.readFailure(error, shownPath);
    }
    const body = answer.Body as AsyncIterable<Uint8Array> & { destroy?: () => void };
    const destroy = () => body.destroy?.();
    const asked = `bytes ${range.start}-${range.end}/${range.size}`;
    if (unquote(answer.ETag) !== etag) {
      destroy();
      throw new SourceChangedError(shownPath, `ETag ${unquote(answer.ETag)}, listed ${etag}`);
    }
    if (answer.ContentRange !== asked) {
      destroy();
      const total = /\/(\d+)$/.exec(answer.ContentRange ?? '')?.[1];
      if (total !== undefined && Number(total) !== range.size)
        throw new SourceChangedError(shownPath, `${total} bytes, listed ${range.size}`);
      throw new SourceUnavailableError(
        this.source,
        `s3 inbox ${this.bucket} answered the range ${asked} of ${shownPath} with ${answer.ContentRange ?? 'no Content-Range'}`,
      );
    }
    const failure = (error: unknown) => this.failure(error);
    return {
      body: (async function* () {
        try {
          yield* body;
        } catch (error) {
          throw failure(error);
        }
      })(),
      destroy,
    };
  }

  /** A small object's version `etag`, whole (see stream). */
  private async readListed(path: string, etag: string, shownPath: string): Promise<Buffer> {
    let answer;
    try {
      answer = await this.signed.getWhole(
        this.bucket,
        this.key(path),
        `"${etag}"`,
        WHOLE_READ_BELOW,
      );
    } catch (error) {
      throw this.readFailure(error, shownPath);
    }
    if (answer === null) throw new SourceChangedError(shownPath, 'it grew past its listed size');
    if (unquote(answer.etag) !== etag)
      throw new SourceChangedError(shownPath, `ETag ${unquote(answer.etag)}, listed ${etag}`);
    return answer.body;
  }

  /** A read's failure: the object changed or gone (SourceChangedError), or the source's error. */
  private readFailure(error: unknown, shownPath: string): unknown {
    const status = s3Status(error);
    if (status === 412)
      return new SourceChangedError(shownPath, 'its ETag is no longer the one listed');
    if (isMissing(error) || (error as { name?: string }).name === 'NoSuchKey')
      return new SourceChangedError(shownPath, 'it is gone');
    return this.failure(error);
  }
}
