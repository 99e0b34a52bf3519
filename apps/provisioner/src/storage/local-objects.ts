/**
 * The storage boundary for copy threads: what a thread may use to create a staged object on this
 * host (`StagingArea.localFiles`, in archive mode `encryptedLocalFiles`), and the page-aligned
 * buffers its direct writes need. Each is plain synchronous `node:fs` work (and, for archive mode,
 * the Crypt4GH library) with no Nest and no main-thread state, so it is safe to load in a
 * `worker_threads` entry; the filesystem adapter's other files stay behind `storage/`.
 */
export { openLocalObject } from './filesystem/local-object';
export { allocAligned, roundUpToBlock } from './filesystem/direct-object-writer';
export { EncryptedLocalObjects } from './archive-local-object';
