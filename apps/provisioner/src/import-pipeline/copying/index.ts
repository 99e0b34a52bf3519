/**
 * The copy engine, seen from the import's steps: the copy threads and what they run (walks of a
 * payload, batches of hashing copies, reads for an upload), the hashing copy on the main thread,
 * and the worker's budget of files held at once. How the engine is split into files (batches,
 * the thread's entry, the walkers) stays its own: other folders import this file only (lint,
 * eslint.config.mjs).
 */
export {
  BATCHES_PER_THREAD,
  COPY_THREAD_ENTRY,
  CopyThreadPool,
  copyFilesOnThreads,
  RETIRE_IDLE_S3_THREADS,
  type CopyFile,
  type ThreadedCopyRequest,
} from './copy-thread-pool';
export { walkOnEventLoop } from './event-loop-walk';
export { FileBudget } from './file-budget';
export { copyWithHashes, type CopyResult, type FileIdentity } from './hashing-copy';
export { type DirectoryWalker, walkPayloadInto } from './payload-walker';
export { walkOnThreads } from './threaded-walk';
