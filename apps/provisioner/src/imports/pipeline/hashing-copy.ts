import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, open } from 'node:fs/promises';
import { ObjectWriter } from '../../storage/storage-system';
import { ImportTransientError } from './import-errors';

export interface CopyResult {
  size: number;
  sha256: string;
  md5: string | null;
}

export interface CopyOptions {
  md5: boolean;
  /** Two buffers: one is read into while the other is being written. */
  buffers: [Buffer, Buffer];
  onBytes?: (bytes: number) => void;
  /** Called after each chunk is read; tests use it to change the source mid-copy. */
  afterChunk?: () => Promise<void>;
}

function sourceChanged(path: string, what: string): ImportTransientError {
  return new ImportTransientError(
    'source_changed',
    `source file changed during the copy: ${path} (${what})`,
    [{ code: 'source_changed', path, message: what }],
  );
}

/**
 * Streams one file into a storage object, hashing in the same pass, in constant memory.
 * The source is stat'ed before and after (by descriptor and by path): a file that grew,
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
    handle = await open(sourcePath, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP' || code === 'ENOENT')
      throw sourceChanged(displayPath, code === 'ELOOP' ? 'replaced by a symlink' : 'disappeared');
    throw error;
  }
  const sha256 = createHash('sha256');
  const md5 = options.md5 ? createHash('md5') : null;
  let total = 0;
  let pendingWrite: Promise<void> | null = null;
  try {
    const before = await handle.stat();
    if (!before.isFile()) throw sourceChanged(displayPath, 'no longer a regular file');
    let current = 0;
    for (;;) {
      const buffer = options.buffers[current];
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
      if (pendingWrite) await pendingWrite;
      pendingWrite = null;
      if (bytesRead === 0) break;
      const chunk = buffer.subarray(0, bytesRead);
      sha256.update(chunk);
      md5?.update(chunk);
      pendingWrite = writer.write(chunk);
      // Awaited after the next read; until then a failing write (ENOSPC on a full disk) would be
      // an unhandled rejection, which kills the worker instead of failing the attempt.
      pendingWrite.catch(() => undefined);
      total += bytesRead;
      options.onBytes?.(bytesRead);
      current ^= 1;
      if (options.afterChunk) await options.afterChunk();
    }
    const after = await handle.stat();
    const byPath = await lstat(sourcePath).catch(() => null);
    if (after.size !== before.size || total !== before.size)
      throw sourceChanged(displayPath, `size ${before.size} -> ${after.size}, read ${total}`);
    if (after.mtimeMs !== before.mtimeMs)
      throw sourceChanged(displayPath, 'modified while being read');
    if (!byPath || byPath.ino !== before.ino || byPath.dev !== before.dev)
      throw sourceChanged(displayPath, 'replaced or removed while being read');
  } catch (error) {
    await pendingWrite?.catch(() => undefined);
    await handle.close();
    await writer.abort().catch(() => undefined);
    throw error;
  }
  await handle.close();
  await writer.commit();
  return { size: total, sha256: sha256.digest('hex'), md5: md5 ? md5.digest('hex') : null };
}
