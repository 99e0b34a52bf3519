import { BATCHES_PER_THREAD, CopyThreadPool } from './copy-thread-pool';
import { reviveError, WalkBatch } from './copy-batch';
import { ImportStoppedError } from '../import-errors';
import type { DirectoryPart, DirectoryWalker } from './payload-walker';

/** Directories per walk batch at most: each is one readdir and an lstat per entry. */
const MAX_DIRECTORIES_PER_WALK = 64;

/**
 * A DirectoryWalker on the pool's threads: the directories are shared out in batches over
 * every thread at once, so walking a payload of many files takes both cores instead of one
 * (each file costs an lstat through the pinned directory's /proc view: ~70 ms for 10,000 files
 * on one thread). The parts come back in the order of `directories`.
 */
export function walkOnThreads(pool: CopyThreadPool, signal?: AbortSignal): DirectoryWalker {
  return async (root, directories) => {
    const slots = Math.max(1, pool.size) * BATCHES_PER_THREAD;
    const perBatch = Math.min(
      MAX_DIRECTORIES_PER_WALK,
      Math.max(1, Math.ceil(directories.length / slots)),
    );
    const parts: DirectoryPart[][] = [];
    let next = 0;
    const pick = () => {
      if (next >= directories.length) return null;
      const start = next;
      next = Math.min(directories.length, next + perBatch);
      const batch: Omit<WalkBatch, 'id'> = {
        walk: { root, directories: directories.slice(start, next) },
      };
      return { batch, tag: start };
    };
    const lane = async (): Promise<void> => {
      for (;;) {
        // A walk cut short would look like missing files: stopping is an error of its own.
        if (signal?.aborted) throw new ImportStoppedError();
        const answered = await pool.runNext<WalkBatch, number>(pick);
        if (!answered) return;
        const walked = answered.reply.parts;
        if ('error' in walked) throw reviveError(walked.error);
        parts[answered.tag] = walked;
      }
    };
    await Promise.all(Array.from({ length: slots }, lane));
    return parts.flatMap((part) => part ?? []);
  };
}
