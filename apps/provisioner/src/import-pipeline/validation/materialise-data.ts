import { chmod, mkdir, open } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { mapLimit } from '../../common/map-limit';
import { isEncryptedDeposit } from '../../storage/archive-storage';
import type { ObjectWriter } from '../../storage/storage-system';
import { copyWithHashes } from '../copying';
import { ImportRejectedError, ImportStoppedError, ImportTransientError } from '../import-errors';
import type { ImportPlan } from '../preflight';
import { ProblemList } from '../problem-list';

/** Files copied at once, each with three buffers of this size. */
const LANES = 4;
const BUFFER_BYTES = 1024 * 1024;

/**
 * Where the staged files are not plain files on this host (S3 storage, archive mode): the
 * dataset's files copied from the source into `dir` for the validators, hashed in the same pass,
 * each checked against the checksums the staged copy was verified with (the plan's: sha256 of
 * every file, md5 where the manifest gave it), so what a validator reads is byte for byte what
 * is published (docs/decisions/validators-before-publication.md). Files are left 0444, their
 * directories 0555. A file that changed at the source since it was staged is a transient fault:
 * the next attempt stages it again and verifies it against the manifest.
 */
export async function materialiseData(
  plan: ImportPlan,
  dir: string,
  options: { encrypted: boolean; signal?: AbortSignal },
): Promise<void> {
  const { files } = plan;
  if (options.encrypted) refuseEncryptedDeposits(plan);
  const md5 = plan.algorithms.includes('md5');
  const directories = new Set<string>([dir]);
  for (let i = 0; i < files.count; i++) {
    let at = dirname(join(dir, files.path(i)));
    while (!directories.has(at)) {
      directories.add(at);
      at = dirname(at);
    }
  }
  // Shortest first: each parent exists before its children.
  const sorted = [...directories].sort((a, b) => a.length - b.length);
  for (const path of sorted) await mkdir(path, { recursive: true, mode: 0o700 });
  const lanes = Array.from({ length: LANES }, (): [Buffer, Buffer, Buffer] => [
    Buffer.allocUnsafe(BUFFER_BYTES),
    Buffer.allocUnsafe(BUFFER_BYTES),
    Buffer.allocUnsafe(BUFFER_BYTES),
  ]);
  const changed = new ProblemList();
  const indexes = Array.from({ length: files.count }, (_, i) => i);
  await mapLimit(indexes, LANES, async (i) => {
    if (options.signal?.aborted) throw new ImportStoppedError();
    const path = files.path(i);
    const buffers = lanes.pop()!;
    try {
      const result = await copyWithHashes(
        join(plan.payloadRoot, path),
        path,
        await localFile(join(dir, path)),
        {
          md5,
          identity: { dev: files.devOf(i), ino: files.inoOf(i) },
          buffers,
          stopRequested: () => options.signal?.aborted ?? false,
        },
      );
      const same =
        result.size === files.size[i] &&
        result.sha256 === files.digestHex('sha256', i) &&
        (!md5 || result.md5 === files.digestHex('md5', i));
      if (!same)
        changed.add({
          code: 'source_changed',
          path,
          message: 'its bytes are no longer those staged and verified',
        });
    } finally {
      lanes.push(buffers);
    }
  });
  if (changed.total > 0)
    throw new ImportTransientError(
      'source_changed',
      `${changed.total} source file(s) changed after they were staged, before the validators read them`,
      changed.details(),
    );
  for (const path of sorted.reverse()) await chmod(path, 0o555);
}

/**
 * A file its depositor encrypted for the archive (`*.c4gh`, archive mode) has never been plain
 * text anywhere: the worker does not decrypt it onto a disk for a validator.
 */
function refuseEncryptedDeposits({ files }: ImportPlan): void {
  const problems = new ProblemList();
  for (let i = 0; i < files.count; i++)
    if (isEncryptedDeposit(files.path(i)))
      problems.add({
        code: 'validation_unavailable',
        path: files.path(i),
        message: 'deposited encrypted: the source has validators, which need the plain text',
      });
  if (problems.total > 0)
    throw new ImportRejectedError(
      'validation_unavailable',
      `${problems.total} file(s) were deposited encrypted (*.c4gh); the source's validators cannot read them, and the worker never writes their plain text to a disk`,
      problems.details(),
    );
}

/** A new local file (0444 once closed) as the copy's ObjectWriter. */
async function localFile(path: string): Promise<ObjectWriter> {
  const handle = await open(path, 'wx', 0o400);
  let closed = false;
  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    await handle.close();
  };
  return {
    write: async (chunk) => {
      let at = 0;
      while (at < chunk.length) {
        const { bytesWritten } = await handle.write(chunk, at, chunk.length - at);
        at += bytesWritten;
      }
    },
    commit: async () => {
      await handle.chmod(0o444);
      await close();
    },
    // The directory is removed whole afterwards.
    abort: close,
  };
}
