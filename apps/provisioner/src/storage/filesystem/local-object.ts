import { closeSync, openSync, writeSync } from 'node:fs';
import { BufferedObjectWriter, LocalObjectWriter, StagingLostError } from '../storage-system';
import { DirectSyncObjectWriter, openDirect } from './direct-object-writer';

/** Staged objects are created read-only: the descriptor stays writable, publishing needs no chmod. */
export const READ_ONLY_FILE = 0o444;

/** Creating an object whose directory is gone: the area was removed underneath the attempt. */
export function stagingLostOnMissing(stagingId: string, error: unknown): unknown {
  return (error as NodeJS.ErrnoException).code === 'ENOENT'
    ? new StagingLostError(stagingId)
    : error;
}

/**
 * A BufferedObjectWriter over a file descriptor. Kept apart from filesystem-storage.ts so a copy
 * thread (file-copy.thread.ts) loads only this and the hashing copy.
 */
class LocalSyncObjectWriter implements BufferedObjectWriter {
  readonly direct = false;

  constructor(private readonly fd: number) {}

  write(chunk: Uint8Array): void {
    let offset = 0;
    while (offset < chunk.length)
      offset += writeSync(this.fd, chunk, offset, chunk.length - offset);
  }

  commit(): void {
    closeSync(this.fd);
  }

  abort(): void {
    closeSync(this.fd);
  }
}

/**
 * Creates the object at an absolute path handed out by StagingArea.localFiles.prepare (whose
 * parent directories exist), on whichever thread calls it. 'wx': a staging object is written
 * once, so finding one means the area is not fresh; a missing parent means the area was removed
 * underneath the attempt (StagingLostError with `stagingId`), never re-created here.
 * `direct`: written past the page cache (DirectSyncObjectWriter) where the filesystem allows it.
 */
export function openLocalObject(
  path: string,
  stagingId: string,
  direct = false,
): LocalObjectWriter {
  try {
    const fd = direct ? openDirect(path, READ_ONLY_FILE) : null;
    if (fd !== null) return new DirectSyncObjectWriter(fd);
    return new LocalSyncObjectWriter(openSync(path, 'wx', READ_ONLY_FILE));
  } catch (error) {
    throw stagingLostOnMissing(stagingId, error);
  }
}

/**
 * A small object created (openLocalObject), written whole and closed in blocking calls; a failed
 * write closes it before it throws.
 */
export function writeLocalObject(path: string, stagingId: string, content: Uint8Array): void {
  const writer = openLocalObject(path, stagingId);
  try {
    writer.write(content);
  } catch (error) {
    writer.abort();
    throw error;
  }
  writer.commit();
}
