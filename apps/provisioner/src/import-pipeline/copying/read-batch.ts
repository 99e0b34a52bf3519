import { join } from 'node:path';
import type { SyncObjectWriter } from '../../storage/storage-system';
import { FileCopyOutcome, serializeError, ThreadReply } from './copy-batch';
import { copyFileWithHashesSync, FileIdentity } from './hashing-copy';
import { ImportStoppedError } from '../import-errors';

/** One small file for a copy thread to read whole: its path and the size preflight found. */
export interface FileReadJob {
  path: string;
  size: number;
  identity?: FileIdentity;
}

/**
 * Small files for a copy thread to read and hash, for a backend whose objects are not local
 * files (S3): the thread answers with their bytes, one buffer for the batch, and the main
 * thread only sends them. Plain data only (structured clone).
 */
export interface ReadBatch {
  id: number;
  read: true;
  sourceRoot: string;
  md5: boolean;
  /** As CopyBatch.bufferBytes: the largest file plus one byte, read in one call. */
  bufferBytes: number;
  jobs: FileReadJob[];
  /** As CopyBatch.stop: set to 1 by the main thread when the import must stop. */
  stop?: Int32Array;
}

/** A file read: its copy result, and where its bytes are in the reply's `data`. */
export type FileReadOutcome = FileCopyOutcome & { offset?: number };

export interface ReadBatchReply extends ThreadReply {
  outcomes: FileReadOutcome[];
  /** Bytes read that no progress message reported (all of them: small files report at the end). */
  bytes: number;
  /** The files' bytes back to back, in the order of the jobs (transferred, not copied). */
  data: ArrayBuffer;
}

/**
 * Gathers one file's bytes into its slot of the batch's buffer. A file that grew past the size
 * preflight found keeps only what fits: the copy's size check fails it anyway.
 */
class SlotWriter implements SyncObjectWriter {
  private written = 0;
  constructor(
    private readonly into: Buffer,
    private readonly offset: number,
    private readonly capacity: number,
  ) {}
  write(chunk: Uint8Array): void {
    const n = Math.min(chunk.length, this.capacity - this.written);
    if (n > 0) this.into.set(chunk.subarray(0, n), this.offset + this.written);
    this.written += chunk.length;
  }
  commit(): void {}
  abort(): void {}
}

/**
 * Reads a ReadBatch in blocking calls, each file with copyFileWithHashesSync (the same checks of
 * the source as every copy), and stops at the first failure: the attempt is over then.
 */
export function runReadBatch(batch: ReadBatch, buffer: Buffer): ReadBatchReply {
  const total = batch.jobs.reduce((sum, job) => sum + job.size, 0);
  // Its own memory (not a slice of Node's shared pool), so it can be handed over whole.
  const data = Buffer.from(new ArrayBuffer(total));
  const outcomes: FileReadOutcome[] = [];
  const stop = batch.stop;
  const stopRequested = stop ? () => Atomics.load(stop, 0) === 1 : undefined;
  let offset = 0;
  let bytes = 0;
  for (const job of batch.jobs) {
    try {
      if (stopRequested?.()) throw new ImportStoppedError();
      const result = copyFileWithHashesSync(
        join(batch.sourceRoot, job.path),
        job.path,
        new SlotWriter(data, offset, job.size),
        { md5: batch.md5, identity: job.identity, buffer, stopRequested },
      );
      outcomes.push({ ...result, offset });
      offset += job.size;
      bytes += result.size;
    } catch (error) {
      outcomes.push({ error: serializeError(error) });
      break;
    }
  }
  return { id: batch.id, outcomes, bytes, data: data.buffer };
}
