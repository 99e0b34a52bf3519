import { createHash, type Hash } from 'node:crypto';
import { type RemoteDataset, SourceChangedError } from '../sources/source-system';
import type {
  DepositedPlaintext,
  ObjectWriter,
  SourceIdentity,
  StagingArea,
} from '../storage/storage-system';
import type { CopyResult } from './copying';
import { ImportStoppedError, ImportTransientError } from './import-errors';

/** One planned file of a remote dataset, as the copy takes it. */
export interface RemoteFile {
  path: string;
  size: number;
  /** The version preflight listed: only its bytes are read (and copied). */
  etag: string;
  /** What stands for the file's inode and times (objectFingerprint, last modified). */
  source: SourceIdentity;
}

export interface RemoteCopyOptions {
  md5: boolean;
  /** Copy server-side where the staging area can (the same store); else download and upload. */
  serverSide: boolean;
  onBytes?: (bytes: number) => void;
  /** Asked after each chunk: true stops the copy (ImportStoppedError). */
  stopRequested?: () => boolean;
}

/**
 * Objects from this size on are copied server-side where the store allows it; smaller ones are
 * uploaded from the bytes read to hash them. Those bytes are in hand anyway, and on Swift a
 * CopyObject of a small object cost the store half as much again as the PUT of it (it reads the
 * source and writes the copy; the PUT only writes): see docs/decisions/s3-inbox-small-objects.md.
 */
export const SERVER_SIDE_COPY_FROM = 1024 * 1024;

/**
 * A large object's chunks (one HTTP body callback each, 64 KiB at most) are gathered to this many
 * bytes and handed to the writer at once (ObjectWriter.writev: one vectored write to a file, no
 * copy), that write running while the next bytes are read and hashed: a write per chunk was a
 * round trip to libuv's pool per 64 KiB, the lane waiting on each. The chunks are never joined
 * into one buffer: fresh memory is what the worker paid most for (page faults), so a lane holds
 * at most two of these in the chunks it read (the ones being written, the ones gathering).
 */
export const WRITE_BYTES = 1024 * 1024;

/**
 * Objects below this size copied into files on this host (StagingArea.localFiles) take the lean
 * path (copyWhole): the body gathered into one buffer, hashed in one go, written with one write.
 * A small object arrives whole anyway (the S3 inbox reads it in one GET below the same size,
 * WHOLE_READ_BELOW), so nothing is created before its bytes are in and checked: a refused or
 * stopped copy leaves no file. Measured alone, it saves little CPU: the copy's own JavaScript was
 * ~20 µs an object on either path (docs/decisions/s3-inbox-small-files-lean-path.md). A lane
 * holds one such buffer at most, as it does a whole read.
 */
export const LEAN_COPY_BELOW = 1024 * 1024;

/** An ETag of a multipart upload: `<md5 of the parts' md5s>-<part count>`. */
const MULTIPART_ETAG = /-\d+$/;

/**
 * A copy's failure as the import sees it: a remote object changed under it is transient, like a
 * local file changed under it; anything else as it is.
 */
function importFailure(error: unknown): unknown {
  if (!(error instanceof SourceChangedError)) return error;
  return new ImportTransientError('source_changed', error.message, [
    { code: 'source_changed', path: error.path, message: error.what },
  ]);
}

/**
 * `total` bytes read so far of `file`, checked against the size listed: more is a changed object,
 * refused as soon as it shows (nothing past the listed size is written or held), and, once the
 * body `ended`, fewer too (before the object is committed). Both paths check with this.
 */
function checkListedSize(file: RemoteFile, total: number, ended: boolean): void {
  if (total > file.size)
    throw new SourceChangedError(file.path, `more bytes than the ${file.size} listed`);
  if (ended && total < file.size)
    throw new SourceChangedError(file.path, `${total} bytes, listed ${file.size}`);
}

/** The checksums of the bytes read: fed chunk by chunk (streaming) or once (lean path). */
class Digests {
  private readonly sha256 = createHash('sha256');
  private readonly md5: Hash | null;

  constructor(md5: boolean) {
    this.md5 = md5 ? createHash('md5') : null;
  }

  update(bytes: Uint8Array): void {
    this.sha256.update(bytes);
    this.md5?.update(bytes);
  }

  result(file: RemoteFile, size: number, reusedBytes?: number): CopyResult {
    return {
      size,
      sha256: this.sha256.digest('hex'),
      md5: this.md5 ? this.md5.digest('hex') : null,
      source: file.source,
      reusedBytes,
    };
  }
}

/**
 * Copies one object of a remote dataset into the staging area, hashing every byte of the
 * version preflight listed (the source's bytes, read with If-Match): below LEAN_COPY_BELOW into
 * files on this host, whole (copyWhole); otherwise streamed through a writer (download and
 * upload), or, from SERVER_SIDE_COPY_FROM on, server-side where the area copies from the same store, the bytes then read
 * only to be hashed while the store copies the same version (x-amz-copy-source-if-match). Either
 * way, an object of other than its listed size is refused (checkListedSize). The
 * checksums are the caller's to compare with the manifests, as for a local file.
 */
export async function copyRemoteObject(
  remote: RemoteDataset,
  file: RemoteFile,
  staging: StagingArea,
  options: RemoteCopyOptions,
): Promise<{ result: CopyResult; plaintext?: DepositedPlaintext }> {
  // Streaming first: it is what an import into S3 storage takes (the job path, as
  // scripts/dev/import-walk.mjs reads it); the lean path only ever writes files on this host.
  return file.size >= LEAN_COPY_BELOW || !staging.localFiles
    ? copyStreamed(remote, file, staging, options)
    : copyWhole(remote.read(file.path, file.etag, file.size), file, staging, options);
}

/** Every object but the lean path's (see copyRemoteObject). */
async function copyStreamed(
  remote: RemoteDataset,
  file: RemoteFile,
  staging: StagingArea,
  options: RemoteCopyOptions,
): Promise<{ result: CopyResult; plaintext?: DepositedPlaintext }> {
  const from =
    options.serverSide && file.size >= SERVER_SIDE_COPY_FROM ? remote.copySource(file.path) : null;
  // The source's bytes, requested only once iterated (below, or never when the copy is refused
  // before they are read).
  const bytes = remote.read(file.path, file.etag, file.size);
  let onAccepted: (() => void) | undefined;
  const accepted = new Promise<void>((resolve) => (onAccepted = resolve));
  const copying =
    from && staging.copyObjectFrom
      ? staging.copyObjectFrom(file.path, { ...from, etag: file.etag, size: file.size, onAccepted })
      : null;
  // Settled before anything else can throw, so its failure is never unhandled.
  let refused = false;
  const copied = copying?.then(
    (made) => {
      refused = !made;
      return made ? null : { refused: true as const };
    },
    (error: unknown) => ({ error }),
  );
  // A store may refuse the condition on a multipart source (Swift does, for every one): the
  // bytes are read once the store has taken the copy's first request, so a refusal costs a
  // request, not a whole read of the object before it is read again to be uploaded.
  if (copied && MULTIPART_ETAG.test(file.etag)) {
    await Promise.race([accepted, copied]);
    if (refused) return copyRemoteObject(remote, file, staging, { ...options, serverSide: false });
  }
  const writer: ObjectWriter | null = copying
    ? null
    : await staging.createObject(file.path, file.size);
  const digests = new Digests(options.md5);
  const writes = writer ? new GatheredWrites(writer) : null;
  let size = 0;
  try {
    for await (const chunk of bytes) {
      size += chunk.length;
      checkListedSize(file, size, false);
      digests.update(chunk);
      if (writes) await writes.add(chunk);
      options.onBytes?.(chunk.length);
      if (options.stopRequested?.()) throw new ImportStoppedError();
    }
    checkListedSize(file, size, true);
    if (writes) await writes.end();
    if (writer) await writer.commit();
    const failed = await copied;
    if (failed && 'error' in failed) throw failed.error;
  } catch (error) {
    await writes?.settled();
    await writer?.abort().catch(() => undefined);
    await copied;
    throw importFailure(error);
  }
  // The store cannot copy this version on its condition: the bytes go through the import (the
  // progress counted them once already).
  if (await copied)
    return copyRemoteObject(remote, file, staging, {
      ...options,
      serverSide: false,
      onBytes: undefined,
    });
  return { result: digests.result(file, size, writer?.reusedBytes), plaintext: writer?.plaintext };
}

/**
 * The lean path (LEAN_COPY_BELOW): the object's body gathered whole, checked and hashed in one
 * go, then written with one write. A stop asked for while it was read stops it before anything
 * is written.
 */
async function copyWhole(
  bytes: AsyncIterable<Uint8Array>,
  file: RemoteFile,
  staging: StagingArea,
  options: RemoteCopyOptions,
): Promise<{ result: CopyResult }> {
  const body = await gathered(bytes, file).catch((error: unknown) => {
    throw importFailure(error);
  });
  const digests = new Digests(options.md5);
  digests.update(body);
  options.onBytes?.(body.length);
  if (options.stopRequested?.()) throw new ImportStoppedError();
  await staging.writeSmallObject(file.path, body);
  return { result: digests.result(file, body.length) };
}

/**
 * A body in one buffer, checked against the size listed as it arrives (nothing past it is held).
 * The S3 inbox reads a small object in one GET: its one chunk is kept as it is, not copied.
 */
async function gathered(bytes: AsyncIterable<Uint8Array>, file: RemoteFile): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of bytes) {
    checkListedSize(file, (size += chunk.length), false);
    chunks.push(chunk);
  }
  checkListedSize(file, size, true);
  return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size);
}

/**
 * Chunks written WRITE_BYTES at a time, one write in flight while the next ones gather (see
 * WRITE_BYTES). The writer sees its writes one at a time and in order, as it would chunk by chunk.
 */
class GatheredWrites {
  private pending: Uint8Array[] = [];
  private pendingBytes = 0;
  private inFlight: Promise<void> | null = null;

  constructor(private readonly writer: ObjectWriter) {}

  async add(chunk: Uint8Array): Promise<void> {
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    if (this.pendingBytes >= WRITE_BYTES) await this.send();
  }

  /** Writes what is left; resolves once every write is done. */
  async end(): Promise<void> {
    if (this.pendingBytes > 0) await this.send();
    await this.inFlight;
    this.inFlight = null;
  }

  /** Waits for the write in flight, whatever its outcome (before the writer is aborted). */
  async settled(): Promise<void> {
    await this.inFlight?.catch(() => undefined);
    this.inFlight = null;
  }

  private async send(): Promise<void> {
    await this.inFlight;
    const pieces = this.pending;
    this.pending = [];
    this.pendingBytes = 0;
    const write = this.writer.writev ? this.writer.writev(pieces) : writeEach(this.writer, pieces);
    // Its failure is seen by the next send or end; until then it must not be unhandled.
    write.catch(() => undefined);
    this.inFlight = write;
  }
}

/** The chunks one after the other, for a writer without writev. */
async function writeEach(writer: ObjectWriter, chunks: readonly Uint8Array[]): Promise<void> {
  for (const chunk of chunks) await writer.write(chunk);
}
