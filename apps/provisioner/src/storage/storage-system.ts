/**
 * Storage behind an iRODS-like interface: collections (directories), objects (files),
 * staging areas, one atomic publish, a read-only lock and free space. Paths are logical,
 * '/'-separated and relative to the storage root (for example projects/P1/SUB-1/data/raw/DS1),
 * so an iRODS or S3 implementation can map them onto its own namespace.
 */
export interface ObjectWriter {
  write(chunk: Uint8Array): Promise<void>;
  /** Closes the object; it is durable once its staging area's sync() has returned. */
  commit(): Promise<void>;
  abort(): Promise<void>;
}

/** ObjectWriter in blocking calls: how a copy thread writes a local file (LocalFiles). */
export interface SyncObjectWriter {
  write(chunk: Uint8Array): void;
  commit(): void;
  abort(): void;
}

/**
 * Where a backend's objects are files on this host (the filesystem backend): what the copy
 * threads need to create them themselves, with openLocalObject (filesystem/local-object.ts).
 */
export interface LocalFiles {
  /**
   * Creates the object's parent collections (StagingLostError when the area is gone), counts
   * the object as the area's (sync() covers it) and returns the absolute path where the caller
   * must create it, on any thread: exclusive, read-only.
   */
  prepare(relativePath: string): string;
  /** Objects of at least this many bytes are best created `direct` (past the page cache); absent, none are. */
  readonly directWriteMinBytes?: number;
}

export interface StagingArea {
  readonly id: string;
  /** `size`, when known, lets a backend that buffers (S3) size its buffer to the object. */
  createObject(relativePath: string, size?: number): Promise<ObjectWriter>;
  /** Present where objects are files on this host: then the copy threads create them. */
  readonly localFiles?: LocalFiles;
  /** Files copied at once per import without copy threads, and each one's read buffer. */
  readonly copyLanes: number;
  readonly copyBufferBytes: number;
  writeSmallObject(relativePath: string, content: string | Uint8Array): Promise<void>;
  createCollection(relativePath: string): Promise<void>;
  /**
   * Makes every object and directory written so far durable (one flush, not one per file).
   * Throws StagingLostError when the area is no longer the one this attempt created.
   */
  sync(): Promise<void>;
}

/** The staging area was removed while its attempt was still using it: never publish it. */
export class StagingLostError extends Error {
  readonly code = 'staging_lost';
  constructor(readonly id: string) {
    super(`staging area ${id} was removed or replaced while in use`);
    this.name = 'StagingLostError';
  }
}

/**
 * The store refused the request in a way no retry cures (credential, permission, no bucket):
 * the import fails visibly instead of being retried.
 */
export class StorageRefusedError extends Error {
  readonly code = 'storage_refused';
  constructor(message: string) {
    super(message);
    this.name = 'StorageRefusedError';
  }
}

export class TargetExistsError extends Error {
  constructor(readonly path: string) {
    super(`${path} already exists`);
    this.name = 'TargetExistsError';
  }
}

export interface StorageSystem {
  readonly description: string;
  /** Where a logical path is, as the catalog registration names it (a path, an s3:// URL). */
  location(path: string): string;
  exists(path: string): Promise<boolean>;
  /** Names of the children of a collection; empty when it does not exist. */
  list(path: string): Promise<string[]>;
  /** A small object's content, or null when absent. */
  readObject(path: string): Promise<Buffer | null>;
  ensureCollection(path: string): Promise<void>;
  /**
   * A fresh staging area for what will be published at `target` (which a backend without
   * rename, S3, requires): whatever an earlier attempt left under the same id is wiped first.
   */
  openStaging(id: string, target?: string): Promise<StagingArea>;
  removeStaging(id: string): Promise<void>;
  listStaging(): Promise<string[]>;
  /**
   * Moves a staging area onto `path` in one atomic step, never over an existing path.
   * With readOnly the tree is locked before it becomes visible (its root right after).
   */
  publish(stagingId: string, path: string, options: { readOnly: boolean }): Promise<void>;
  freeBytes(): Promise<number>;
}
