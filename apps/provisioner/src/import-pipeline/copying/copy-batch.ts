import { join } from 'node:path';
import type { HeaderKeys } from '@app/crypt4gh';
import { EncryptedLocalObjects, openLocalObject } from '../../storage/local-objects';
import { type EncryptedTargets, StagingLostError } from '../../storage/storage-system';
import {
  copyFileWithHashesOverlapped,
  copyFileWithHashesSync,
  CopyResult,
  FileIdentity,
} from './hashing-copy';
import { ImportProblem, ImportStoppedError, ImportTransientError } from '../import-errors';
import { DirectoryPart, PendingDirectory, walkDirectoriesSync } from './payload-walker';

/** One file for a copy thread: its path in the payload, and where to create it. */
export interface FileCopyJob {
  path: string;
  /** Absolute path from StagingArea.localFiles.prepare; its directories exist. */
  target: string;
  /** The file preflight planned (see copyFileWithHashesSync). */
  identity?: FileIdentity;
  /** Created with openLocalObject's `direct` (past the page cache). */
  direct?: boolean;
  /**
   * Archive mode (CopyBatch.headerKeys): where the file's header and body checksum are created;
   * `target` is its body's.
   */
  companions?: Omit<EncryptedTargets, 'body'>;
}

/** What the main thread posts to a copy thread: plain data only (structured clone). */
export interface CopyBatch {
  id: number;
  stagingId: string;
  /** The payload root the jobs' paths are relative to (joined in the thread). */
  sourceRoot: string;
  md5: boolean;
  /**
   * Read buffer size: the largest file of the batch plus one byte reads each file in one call.
   * The buffer is page-aligned (allocAligned), so a direct object's chunks go out uncopied.
   */
  bufferBytes: number;
  jobs: FileCopyJob[];
  /**
   * Archive mode (StagingArea.encryptedLocalFiles): every file of the batch is stored encrypted
   * (EncryptedLocalObjects), with these header keys, and each job names its companions.
   */
  headerKeys?: HeaderKeys;
  /**
   * A flag the main thread sets (to 1) when the import must stop: shared memory, so a thread in
   * the middle of a large file sees it after the chunk it is copying.
   */
  stop?: Int32Array;
}

/**
 * An error as it crosses the thread boundary: structured clone keeps neither the class nor
 * properties such as `code`, so they travel as fields and are rebuilt by reviveError.
 */
export interface SerializedError {
  name: string;
  message: string;
  stack?: string;
  code?: string;
  errno?: number;
  syscall?: string;
  path?: string;
  details?: ImportProblem[];
  stagingId?: string;
}

/** Per job, in order: a result, or the error that stopped the batch (nothing after it). */
export type FileCopyOutcome = CopyResult | { error: SerializedError };

/** What every answer of a copy thread carries. */
export interface ThreadReply {
  id: number;
  /**
   * Bytes the thread's V8 heap (total_heap_size) has grown since the thread loaded its code, as
   * it answered: an idle thread grown past the pool's bound is ended (see RetireBound).
   */
  heapGrowth?: number;
}

export interface CopyBatchReply extends ThreadReply {
  outcomes: FileCopyOutcome[];
  /** Bytes copied that no CopyBatchProgress has reported yet. */
  bytes: number;
}

/** Directories of a payload for a copy thread to walk (see walkOnThreads). */
export interface WalkBatch {
  id: number;
  walk: { root: string; directories: PendingDirectory[] };
}

/** What each directory of a WalkBatch holds, in order, or the error that stopped the walk. */
export interface WalkBatchReply extends ThreadReply {
  parts: DirectoryPart[] | { error: SerializedError };
}

/** Walks a WalkBatch in blocking calls; a payload changed underneath answers with the error. */
export function runWalkBatch(batch: WalkBatch): WalkBatchReply {
  try {
    return { id: batch.id, parts: walkDirectoriesSync(batch.walk.root, batch.walk.directories) };
  } catch (error) {
    return { id: batch.id, parts: { error: serializeError(error) } };
  }
}

/** Sent while a batch runs (a large file takes seconds): bytes copied since the last report. */
export interface CopyBatchProgress {
  id: number;
  progress: number;
}

export function serializeError(error: unknown): SerializedError {
  if (!(error instanceof Error)) return { name: 'Error', message: String(error) };
  const e = error as Error & Partial<NodeJS.ErrnoException> & { details?: ImportProblem[] };
  return {
    name: e.name,
    message: e.message,
    stack: e.stack,
    ...(typeof e.code === 'string' ? { code: e.code } : {}),
    ...(typeof e.errno === 'number' ? { errno: e.errno } : {}),
    ...(e.syscall ? { syscall: e.syscall } : {}),
    ...(e.path ? { path: e.path } : {}),
    ...(error instanceof ImportTransientError ? { details: error.details } : {}),
    ...(error instanceof StagingLostError ? { stagingId: error.id } : {}),
  };
}

/** The error classes the pipeline and the job processor tell apart, as the copy threw them. */
export function reviveError(serialized: SerializedError): Error {
  let error: Error;
  if (serialized.name === 'ImportStoppedError') {
    error = new ImportStoppedError(serialized.message);
  } else if (serialized.name === 'ImportTransientError') {
    error = new ImportTransientError(serialized.code!, serialized.message, serialized.details);
  } else if (serialized.name === 'StagingLostError') {
    error = new StagingLostError(serialized.stagingId!);
  } else {
    // System errors (EACCES, EIO, ENOSPC...): same message and fields as Node gives them.
    error = Object.assign(new Error(serialized.message), {
      ...(serialized.code !== undefined ? { code: serialized.code } : {}),
      ...(serialized.errno !== undefined ? { errno: serialized.errno } : {}),
      ...(serialized.syscall !== undefined ? { syscall: serialized.syscall } : {}),
      ...(serialized.path !== undefined ? { path: serialized.path } : {}),
    });
    if (serialized.name !== 'Error') error.name = serialized.name;
  }
  if (serialized.stack) error.stack = `${serialized.stack}\n    (in a copy thread)`;
  return error;
}

/**
 * A copy thread's read buffers, page-aligned (allocAligned) for direct writes: `buffer` for every
 * file, and `spares()` (DIRECT_WRITE_BUFFERS - 1 more of the same size) for the files written
 * direct: one chunk is read while another is hashed and the others written
 * (copyFileWithHashesOverlapped).
 */
export interface CopyBuffers {
  buffer: Buffer;
  spares(): Buffer[];
}

/** An archive batch's job without its companions would be a plain file: never made. */
function companionsOf(job: FileCopyJob): Omit<EncryptedTargets, 'body'> {
  if (!job.companions) throw new Error(`${job.path}: an encrypted copy names no header`);
  return job.companions;
}

/**
 * Copies a batch, each file with copyFileWithHashesSync (the same checks as on the main
 * thread), or copyFileWithHashesOverlapped where its object is written direct; stops at the
 * first failure: the attempt is over then. Resolves only once no write of the batch is in
 * flight.
 */
export async function runCopyBatch(
  batch: CopyBatch,
  buffers: CopyBuffers,
  onBytes?: (bytes: number) => void,
): Promise<FileCopyOutcome[]> {
  const outcomes: FileCopyOutcome[] = [];
  const stop = batch.stop;
  const stopRequested = stop ? () => Atomics.load(stop, 0) === 1 : undefined;
  const encrypted =
    batch.headerKeys && new EncryptedLocalObjects(batch.headerKeys, batch.stagingId);
  for (const job of batch.jobs) {
    try {
      if (stopRequested?.()) throw new ImportStoppedError();
      const source = join(batch.sourceRoot, job.path);
      const writer = encrypted
        ? encrypted.open({ body: job.target, ...companionsOf(job) }, job.direct)
        : openLocalObject(job.target, batch.stagingId, job.direct);
      const options = { md5: batch.md5, identity: job.identity, onBytes, stopRequested };
      // A buffered object (a small file, or a filesystem that refused O_DIRECT): blocking
      // writes into the page cache leave nothing to overlap.
      outcomes.push(
        writer.direct
          ? await copyFileWithHashesOverlapped(source, job.path, writer, {
              ...options,
              buffers: [buffers.buffer, ...buffers.spares()],
            })
          : copyFileWithHashesSync(source, job.path, writer, {
              ...options,
              buffer: buffers.buffer,
            }),
      );
    } catch (error) {
      outcomes.push({ error: serializeError(error) });
      break;
    }
  }
  return outcomes;
}
