import { createHash, Hash } from 'node:crypto';
import { closeSync, fstatSync, openSync, read, readSync, Stats } from 'node:fs';
import { open } from 'node:fs/promises';
import { OPEN_SOURCE_FLAGS } from '../../sources/source-system';
import type {
  DirectObjectWriter,
  ObjectWriter,
  SourceIdentity,
  SyncObjectWriter,
} from '../../storage/storage-system';
import { ImportStoppedError, ImportTransientError } from '../import-errors';

export interface CopyResult {
  size: number;
  sha256: string;
  md5: string | null;
  /** The source file as the copy opened it (what a later attempt compares before keeping it). */
  source: SourceIdentity;
  /** Bytes the store already held from an earlier attempt (ObjectWriter.reusedBytes), if any. */
  reusedBytes?: number;
}

/** Device and inode a file had when preflight walked the payload. */
export interface FileIdentity {
  dev: number;
  ino: number;
}

export interface CopyOptions {
  md5: boolean;
  /** The file preflight planned: the descriptor opened must be it (not a file swapped in since). */
  identity?: FileIdentity;
  /**
   * Three buffers of the same size: while one chunk is hashed, the next is being read and the
   * previous one written (reads and writes run on libuv's thread pool, hashing here).
   */
  buffers: [Buffer, Buffer, Buffer];
  onBytes?: (bytes: number) => void;
  /** Called after each chunk is read; tests use it to change the source mid-copy. */
  afterChunk?: () => Promise<void>;
  /** Asked after each chunk: true stops the copy (ImportStoppedError) and aborts the object. */
  stopRequested?: () => boolean;
}

function sourceChanged(path: string, what: string): ImportTransientError {
  return new ImportTransientError(
    'source_changed',
    `source file changed during the copy: ${path} (${what})`,
    [{ code: 'source_changed', path, message: what }],
  );
}

function openFailure(error: unknown, displayPath: string): unknown {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ELOOP') return sourceChanged(displayPath, 'replaced by a symlink');
  if (code === 'ENOENT' || code === 'ENOTDIR') return sourceChanged(displayPath, 'disappeared');
  if (code === 'ENXIO') return sourceChanged(displayPath, 'replaced by a socket');
  return error;
}

/**
 * What the descriptor must be before a byte is read: a regular file (a FIFO or device swapped
 * in is opened without blocking thanks to O_NONBLOCK, and refused here) and, when preflight
 * planned it, the very file it walked (an intermediate directory swapped for a link would
 * resolve to another file).
 */
function checkOpened(displayPath: string, stats: Stats, identity: FileIdentity | undefined): void {
  if (!stats.isFile()) throw sourceChanged(displayPath, 'no longer a regular file');
  if (identity && (stats.dev !== identity.dev || stats.ino !== identity.ino))
    throw sourceChanged(displayPath, 'not the file preflight found (replaced)');
}

/**
 * The before/after comparison shared by both copy paths, both by descriptor. A file renamed
 * away, removed or replaced by a rename over it while it was read has its link count dropped
 * (replaced, removed) or its change time set (moved: Linux file systems stamp the ctime of a
 * renamed inode), so no second lookup of its path is needed: that lookup, through the pinned
 * directory's /proc view, cost more than the rest of the checks together (10,000 files: ~40 ms
 * of CPU). Anything else that sets the change time (chmod, a new hard link) fails too: safe.
 */
const identityOf = (stats: Stats): SourceIdentity => ({
  ino: stats.ino,
  size: stats.size,
  mtimeMs: stats.mtimeMs,
  ctimeMs: stats.ctimeMs,
});

function checkUnchanged(displayPath: string, before: Stats, after: Stats, total: number): void {
  if (after.size !== before.size || total !== before.size)
    throw sourceChanged(displayPath, `size ${before.size} -> ${after.size}, read ${total}`);
  if (after.mtimeMs !== before.mtimeMs)
    throw sourceChanged(displayPath, 'modified while being read');
  if (after.nlink !== before.nlink || after.ctimeMs !== before.ctimeMs)
    throw sourceChanged(displayPath, 'replaced or removed while being read');
}

/**
 * Streams one file into a storage object, hashing in the same pass, in constant memory.
 * The source is stat'ed before and after (by descriptor; see checkUnchanged): a file that grew,
 * shrank, was touched or replaced while it was read fails the attempt instead of being
 * published half-old, half-new.
 */
export async function copyWithHashes(
  sourcePath: string,
  displayPath: string,
  writer: ObjectWriter,
  options: CopyOptions,
): Promise<CopyResult> {
  let handle;
  try {
    handle = await open(sourcePath, OPEN_SOURCE_FLAGS);
  } catch (error) {
    // The object's descriptor is closed too, as on the blocking path: left to the garbage
    // collector, it stayed open until then.
    await writer.abort().catch(() => undefined);
    throw openFailure(error, displayPath);
  }
  const sha256 = createHash('sha256');
  const md5 = options.md5 ? createHash('md5') : null;
  let total = 0;
  let pendingWrite: Promise<void> | null = null;
  let before: Stats;
  try {
    before = await handle.stat();
    checkOpened(displayPath, before, options.identity);
    const { buffers } = options;
    let current = 0;
    let reading = handle.read(buffers[0], 0, buffers[0].length, null);
    for (;;) {
      const { bytesRead } = await reading;
      if (bytesRead === 0) break;
      // The next read goes into the buffer whose write was awaited last round, so it is free.
      const next = (current + 1) % 3;
      reading = handle.read(buffers[next], 0, buffers[next].length, null);
      // Never left unobserved: a read failing while this chunk is hashed is rethrown above.
      reading.catch(() => undefined);
      const chunk = buffers[current].subarray(0, bytesRead);
      sha256.update(chunk);
      md5?.update(chunk);
      // One write in flight at a time: positionless writes must reach the file in order.
      if (pendingWrite) await pendingWrite;
      pendingWrite = writer.write(chunk);
      // Awaited next round; until then a failing write (ENOSPC on a full disk) would be
      // an unhandled rejection, which kills the worker instead of failing the attempt.
      pendingWrite.catch(() => undefined);
      total += bytesRead;
      options.onBytes?.(bytesRead);
      current = next;
      if (options.afterChunk) await options.afterChunk();
      if (options.stopRequested?.()) throw new ImportStoppedError();
    }
    if (pendingWrite) await pendingWrite;
    pendingWrite = null;
    checkUnchanged(displayPath, before, await handle.stat(), total);
  } catch (error) {
    await pendingWrite?.catch(() => undefined);
    await handle.close();
    // A stop keeps what the store confirmed (an upload's parts) for the attempt that resumes.
    const keep = error instanceof ImportStoppedError && writer.suspend !== undefined;
    await (keep ? writer.suspend!() : writer.abort()).catch(() => undefined);
    throw error;
  }
  await handle.close();
  await writer.commit();
  return {
    size: total,
    sha256: sha256.digest('hex'),
    md5: md5 ? md5.digest('hex') : null,
    source: identityOf(before),
    ...(writer.reusedBytes ? { reusedBytes: writer.reusedBytes } : {}),
  };
}

export interface SyncCopyOptions {
  md5: boolean;
  identity?: FileIdentity;
  buffer: Buffer;
  onBytes?: (bytes: number) => void;
  /** Called after each chunk is read; tests use it to change the source mid-copy. */
  afterChunk?: () => void;
  /** Asked after each chunk: true stops the copy (ImportStoppedError) and aborts the object. */
  stopRequested?: () => boolean;
}

/** What both blocking paths take besides their buffers. */
type SourceOptions = Omit<SyncCopyOptions, 'buffer'>;

/**
 * Buffers a copy thread gives a file written direct (1 MiB each), taken in turn: one being read
 * into, one hashed, the others being written. With one 1 MiB write at a time the device's
 * latency per write, not the hash, set the pace (docs/decisions/copy-threads.md).
 */
export const DIRECT_WRITE_BUFFERS = 4;

export interface OverlappedCopyOptions extends SourceOptions {
  /**
   * At least three page-aligned buffers (allocAligned) of the same size, a multiple of the block
   * size, taken in turn: one being read into, one hashed, the others written (DIRECT_WRITE_BUFFERS).
   */
  buffers: Buffer[];
}

/**
 * A source file opened by one of the copy threads' two paths (copyFileWithHashesSync,
 * copyFileWithHashesOverlapped), with what both check and compute: the file opened is the one
 * planned, every chunk is hashed and counted, a short read is the end, the stop flag is
 * honoured, and the file is unchanged at the end. The paths differ only in how a chunk is
 * written.
 */
class BlockingRead {
  private readonly sha256 = createHash('sha256');
  private readonly md5: Hash | null;
  private total = 0;

  private constructor(
    private readonly fd: number,
    private readonly before: Stats,
    private readonly displayPath: string,
    private readonly options: SourceOptions,
  ) {
    this.md5 = options.md5 ? createHash('md5') : null;
  }

  /** Opens and checks the source; on failure the object is aborted (its descriptor closed). */
  static open(
    sourcePath: string,
    displayPath: string,
    writer: SyncObjectWriter,
    options: SourceOptions,
  ): BlockingRead {
    let fd: number;
    try {
      fd = openSync(sourcePath, OPEN_SOURCE_FLAGS);
    } catch (error) {
      writer.abort();
      throw openFailure(error, displayPath);
    }
    try {
      const before = fstatSync(fd);
      checkOpened(displayPath, before, options.identity);
      return new BlockingRead(fd, before, displayPath, options);
    } catch (error) {
      closeSync(fd);
      abortQuietly(writer);
      throw error;
    }
  }

  /** Reads the next chunk into `buffer` and hashes it: empty at the end of the file. */
  read(buffer: Buffer): Buffer {
    const bytesRead = readSync(this.fd, buffer, 0, buffer.length, null);
    const chunk = buffer.subarray(0, bytesRead);
    this.hash(chunk);
    return chunk;
  }

  /**
   * Reads the next chunk into `buffer` on libuv's thread pool, unhashed (hash() it in order):
   * empty at the end of the file. One read in flight at a time (reads go in file order).
   */
  readInBackground(buffer: Buffer): Promise<Buffer> {
    return new Promise((resolve, reject) =>
      read(this.fd, buffer, 0, buffer.length, null, (error, bytesRead) =>
        error ? reject(error) : resolve(buffer.subarray(0, bytesRead)),
      ),
    );
  }

  hash(chunk: Buffer): void {
    this.sha256.update(chunk);
    this.md5?.update(chunk);
  }

  /**
   * A chunk handed to the writer: counted and reported. False when it was the last; throws
   * ImportStoppedError when the import must stop.
   */
  continuesAfter(chunk: Buffer, bufferBytes: number): boolean {
    this.total += chunk.length;
    this.options.onBytes?.(chunk.length);
    this.options.afterChunk?.();
    // A short read of a regular file is its end: no second read to see 0 bytes (one syscall
    // of ~ten per small file). Growth after it, or a short read that was not the end, fails
    // the size check of checkUnchanged, as any change does.
    if (chunk.length < bufferBytes) return false;
    if (this.options.stopRequested?.()) throw new ImportStoppedError();
    return true;
  }

  checkUnchanged(): void {
    checkUnchanged(this.displayPath, this.before, fstatSync(this.fd), this.total);
  }

  /** After a failure (and once no write is in flight): the copy's own error is the one thrown. */
  fail(writer: SyncObjectWriter): void {
    closeSync(this.fd);
    abortQuietly(writer);
  }

  /** After checkUnchanged passed (and once no write is in flight). */
  commit(writer: SyncObjectWriter): CopyResult {
    closeSync(this.fd);
    writer.commit();
    return {
      size: this.total,
      sha256: this.sha256.digest('hex'),
      md5: this.md5 ? this.md5.digest('hex') : null,
      source: identityOf(this.before),
    };
  }
}

function abortQuietly(writer: SyncObjectWriter): void {
  try {
    writer.abort();
  } catch {
    // The copy's own error is the one worth reporting.
  }
}

/**
 * copyWithHashes in synchronous calls, as the copy threads run it: the same checks and the same
 * single read-hash-write pass, but each file costs no thread-pool round trips (an async copy of
 * a 4 KiB file is ~20 of them, which is what made 10,000 small files 15x slower than cp).
 * Blocks its thread for the length of one file, so it runs on copy threads only.
 */
export function copyFileWithHashesSync(
  sourcePath: string,
  displayPath: string,
  writer: SyncObjectWriter,
  options: SyncCopyOptions,
): CopyResult {
  const { buffer } = options;
  const source = BlockingRead.open(sourcePath, displayPath, writer, options);
  try {
    for (;;) {
      const chunk = source.read(buffer);
      if (chunk.length === 0) break;
      writer.write(chunk);
      if (!source.continuesAfter(chunk, buffer.length)) break;
    }
    source.checkUnchanged();
  } catch (error) {
    source.fail(writer);
    throw error;
  }
  return source.commit(writer);
}

/**
 * copyFileWithHashesSync for a file written direct (a DirectObjectWriter), in three
 * stages: while the device writes the chunks before it and libuv's pool reads the next one, this
 * thread hashes chunk k, so it does nothing but hash (a file's SHA-256 is one sequential pass:
 * the one stage that cannot be shared out) instead of also copying each chunk out of the page
 * cache. Each chunk is written at its own position, so several writes are in flight (at most one
 * per buffer): one O_DIRECT write at a time left the thread waiting on the device's latency for
 * every chunk (docs/decisions/copy-threads.md). A buffer is read into again only once the write
 * of its last chunk has ended; one read in flight at a time (reads go in file order); every read
 * and write is awaited before the descriptors are closed, on any outcome.
 */
export async function copyFileWithHashesOverlapped(
  sourcePath: string,
  displayPath: string,
  writer: DirectObjectWriter,
  options: OverlappedCopyOptions,
): Promise<CopyResult> {
  const { buffers } = options;
  const count = buffers.length;
  if (count < 3) throw new RangeError('copyFileWithHashesOverlapped takes at least three buffers');
  const size = buffers[0].length;
  const source = BlockingRead.open(sourcePath, displayPath, writer, options);
  // Writes in flight, in chunk order; chunk k is read into (and written from) buffers[k % count].
  const writes: { chunk: number; done: Promise<void>; ended: boolean }[] = [];
  const startRead = (chunk: number): Promise<Buffer> => {
    const pending = source.readInBackground(buffers[chunk % count]);
    // Never left unobserved while the chunk before it is hashed: rethrown where it is awaited.
    pending.catch(() => undefined);
    return pending;
  };
  // Waits for the writes up to chunk `last`, oldest first, a failed one throwing its error.
  const awaitWrites = async (last: number): Promise<void> => {
    while (writes.length > 0 && writes[0].chunk <= last) await writes.shift()!.done;
  };
  let reading: Promise<Buffer> | null = startRead(0);
  try {
    for (let k = 0; ; k++) {
      const chunk: Buffer = await reading!;
      reading = null;
      if (chunk.length === 0) break;
      // Writes that have ended leave the list (a failure is thrown here, not lost).
      while (writes[0]?.ended) await writes.shift()!.done;
      // Chunk k+1 goes into the buffer chunk k+1-count was written from: read it now if that
      // write has ended, else once this chunk is hashed and sent. A short chunk is the end.
      const full = chunk.length === size;
      const bufferFree = writes.length === 0 || writes[0].chunk > k + 1 - count;
      if (full && bufferFree) reading = startRead(k + 1);
      source.hash(chunk);
      const write = { chunk: k, done: writer.writeInBackground(chunk), ended: false };
      // Awaited before its buffer is read into again and before anything is closed; until then
      // a failed write (ENOSPC) must not count as an unhandled rejection, which would end the
      // thread.
      write.done.then(
        () => (write.ended = true),
        () => (write.ended = true),
      );
      writes.push(write);
      if (!source.continuesAfter(chunk, size)) break;
      if (!reading) {
        await awaitWrites(k + 1 - count);
        reading = startRead(k + 1);
      }
    }
    await awaitWrites(Infinity);
    source.checkUnchanged();
  } catch (error) {
    // A read or write in flight still uses the descriptors and its buffer: closed only after.
    await Promise.all([
      reading?.catch(() => undefined),
      ...writes.map((write) => write.done.catch(() => undefined)),
    ]);
    source.fail(writer);
    throw error;
  }
  return source.commit(writer);
}
