/**
 * The worker no longer holds the lock of the import it was running (it was frozen or cut off
 * past IMPORT_LOCK_MS and another worker took the import over): it stops, writing nothing.
 */
export class LockLostError extends Error {
  readonly code = 'lock_lost';
  constructor(readonly importId: string) {
    super(`import ${importId}: this worker no longer holds its lock`);
    this.name = 'LockLostError';
  }
}
