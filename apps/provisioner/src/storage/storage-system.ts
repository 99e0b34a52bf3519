import type { HeaderKeys } from '@app/crypt4gh';
import type { ObjectCopySource } from '../sources/source-system';
import type { PathTable } from '../common/path-table';

/**
 * Storage behind an iRODS-like interface: collections (directories), objects (files),
 * staging areas, one atomic publish, a read-only lock and free space. Paths are logical,
 * '/'-separated and relative to the storage root (for example projects/P1/SUB-1/data/raw/DS1),
 * so an iRODS or S3 implementation can map them onto its own namespace.
 */
export interface ObjectWriter {
  write(chunk: Uint8Array): Promise<void>;
  /**
   * The chunks in order, as write would take them one by one, in one call where the store can
   * (a file: one vectored write); the chunks are not copied, so the caller keeps them unchanged
   * until it resolves.
   */
  writev?(chunks: readonly Uint8Array[]): Promise<void>;
  /** Closes the object; it is durable once its staging area's sync() has returned. */
  commit(): Promise<void>;
  abort(): Promise<void>;
  /**
   * Stops writing, leaving what the store already confirmed for a later attempt to resume (an
   * S3 multipart upload's parts); absent, a stop aborts.
   */
  suspend?(): Promise<void>;
  /** After commit: bytes the store already held from an earlier attempt, not written again. */
  readonly reusedBytes?: number;
  /**
   * After commit, where the bytes written were a file encrypted by its depositor, which the store
   * keeps re-wrapped (archive mode, `*.c4gh`): its plain-text's size and checksums, computed in
   * memory, and the name it is stored under.
   */
  readonly plaintext?: DepositedPlaintext;
}

/** What a deposited encrypted file holds (ObjectWriter.plaintext). */
export interface DepositedPlaintext {
  storedPath: string;
  size: number;
  sha256: string;
  md5: string;
}

/** What StagingArea.writeSmallObject takes. */
export type ObjectContent = string | Uint8Array | Iterable<Uint8Array>;

/** An ObjectContent as pieces of bytes. */
export function* contentPieces(content: ObjectContent): Generator<Uint8Array> {
  if (typeof content === 'string') yield Buffer.from(content);
  else if (content instanceof Uint8Array) yield content;
  else yield* content;
}

/** ObjectWriter in blocking calls: how a copy thread writes a local file (LocalFiles). */
export interface SyncObjectWriter {
  write(chunk: Uint8Array): void;
  commit(): void;
  abort(): void;
}

/**
 * A local object written past the page cache (O_DIRECT): besides the blocking calls, it can
 * write without blocking its thread.
 */
export interface DirectObjectWriter extends SyncObjectWriter {
  readonly direct: true;
  /**
   * Starts writing `chunk` on libuv's thread pool. Until the promise settles, the chunk's memory
   * must stay untouched and nothing else may be written, committed or aborted.
   */
  writeInBackground(chunk: Uint8Array): Promise<void>;
}

/** A local object written through the page cache. */
export interface BufferedObjectWriter extends SyncObjectWriter {
  readonly direct: false;
}

/** What openLocalObject creates: `direct` says which of the two the filesystem allowed. */
export type LocalObjectWriter = BufferedObjectWriter | DirectObjectWriter;

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
  /**
   * The area's directory, where an object created at a relative path is `<root>/<path>`: what
   * validators read the staged files from (validate-dataset.step.ts), never write.
   */
  readonly root?: string;
}

/**
 * Archive mode where the backend's objects are files on this host: what the copy threads need to
 * store each file encrypted themselves (archive-local-object.ts), its header and body checksum
 * beside it, as createObject would (docs/decisions/archive-encryption.md). Set instead of
 * LocalFiles, never with it, so no code that only knows LocalFiles creates a plain file.
 */
export interface EncryptedLocalFiles {
  /**
   * As LocalFiles.prepare, for the three objects of the file at `relativePath` (never an
   * encrypted deposit: those are re-wrapped through createObject).
   */
  prepare(relativePath: string): EncryptedTargets;
  /** The area's header writer (one writer key pair per area), for another thread of this process. */
  readonly headerKeys: HeaderKeys;
  /** Bodies of files of at least this many plain-text bytes are best created `direct`; absent, none are. */
  readonly directWriteMinBytes?: number;
}

/** Absolute paths where a copy thread creates a file's body, its header and its body's SHA-256. */
export interface EncryptedTargets {
  body: string;
  header: string;
  bodySha256: string;
}

/** The source file a staged file was copied from, as fstat saw it when the copy opened it. */
export interface SourceIdentity {
  ino: number;
  size: number;
  mtimeMs: number;
  ctimeMs: number;
}

/**
 * A file an attempt copied into its staging area, with what the copy computed and what it was
 * copied from: recorded as it is copied (StagingArea.record), so a later attempt that adopts the
 * area can keep it instead of copying it again (docs/decisions/kept-staged-files.md).
 */
export interface StagedFile {
  /** Path relative to the area (a manifest path). */
  path: string;
  size: number;
  sha256: string;
  md5: string | null;
  source: SourceIdentity;
}

/**
 * The files a staging area inherited, each built when asked for (an array will do): an area
 * adopted with a million files holds them as columns, not as objects.
 */
export interface InheritedFiles {
  readonly length: number;
  at(index: number): StagedFile | undefined;
}

/** What a server-side copy takes: the source object, and the version (ETag) and size listed. */
export interface ServerSideCopy extends ObjectCopySource {
  etag: string;
  size: number;
  /** Called once the store has accepted the copy's condition (its first request succeeded). */
  onAccepted?: () => void;
}

/** Options of StorageSystem.openStaging. */
export interface OpenStagingOptions {
  /**
   * Earlier areas of the same import (dead attempts), preferred first: the new area takes over
   * what they recorded and still hold (StagingArea.inherited) and they are gone afterwards.
   * Only for the attempt that holds the import's job lock.
   */
  adopt?: readonly string[];
}

/** The plan's files as a staging area is told them: paths, and each one's size by row. */
export type ExpectedFiles = PathTable & { readonly size: Float64Array };

export interface StagingArea {
  readonly id: string;
  /**
   * Files earlier attempts recorded (StagingArea.record) in the areas this one adopted, each
   * still held by the storage as recorded (its size; on S3 its size and ETag too). Empty for a
   * fresh area. Whether each is still what the source holds is the caller's to decide.
   */
  readonly inherited: InheritedFiles;
  /**
   * Removes whatever the area holds (or, on S3, holds under its target) except what `keep`
   * accepts: the inherited files it names, and what a layer above wrote with them (archive mode:
   * each one's header and body checksum). What earlier attempts left half-written or no longer
   * wanted goes. Called once, before the first object is created.
   */
  discardExcept(keep: (path: string) => boolean): Promise<void>;
  /**
   * Records files this attempt has copied and committed: once this resolves, their bytes and
   * the record are durable (the bytes first), and a later attempt that adopts the area inherits
   * them. `objectsOf` names every object a layer above stored for a file, all of them durable
   * before its record (archive mode: its header, body and body checksum); by default the file's
   * own path.
   */
  record(
    files: readonly StagedFile[],
    objectsOf?: (file: StagedFile) => readonly string[],
  ): Promise<void>;
  /**
   * Present where the area keeps a record of each object it stored (S3: size and ETag, which
   * publish confirms): the paths the copy will create (the plan's, read and never changed while
   * the area is used) and their planned sizes, told once before the copy, so their records are
   * kept by row there, a million paths are not held a second time, and an object of its
   * planned size holds no size of its own. Objects at other paths are recorded as before.
   */
  expectFiles?(files: ExpectedFiles): void;
  /** `size`, when known, lets a backend that buffers (S3) size its buffer to the object. */
  createObject(relativePath: string, size?: number): Promise<ObjectWriter>;
  /**
   * Present where the store copies objects server-side (S3): copies `source` to `relativePath`,
   * only the version with its ETag (SourceChangedError otherwise), and stores it like a committed
   * writer's object; null when the source is in another store (or one that cannot copy it on
   * its condition), and it resolves false when the store refused the condition on a source that
   * still has that ETag: the caller then writes the bytes itself. Whoever calls it still reads the
   * source's bytes to hash them: the copy is never trusted unread.
   */
  copyObjectFrom?(relativePath: string, source: ServerSideCopy): Promise<boolean> | null;
  /** Present where objects are files on this host: then the copy threads create them. */
  readonly localFiles?: LocalFiles;
  /** In archive mode, where objects are files on this host: the copy threads encrypt them. */
  readonly encryptedLocalFiles?: EncryptedLocalFiles;
  /** Files copied at once per import without copy threads, and each one's read buffer. */
  readonly copyLanes: number;
  readonly copyBufferBytes: number;
  /**
   * An object written whole: its text, its bytes, or its pieces in order (read one at a time,
   * so a stored manifest of a million lines is never held whole where the backend streams).
   */
  writeSmallObject(relativePath: string, content: ObjectContent): Promise<void>;
  createCollection(relativePath: string): Promise<void>;
  /**
   * Makes every object and directory written so far durable (one flush, not one per file).
   * Throws StagingLostError when the area is no longer the one this attempt created.
   */
  sync(): Promise<void>;
  /**
   * Present where one flush makes the whole area durable (a local filesystem's syncfs): starts
   * writing out what the copy has written so far, in the background, so that the flush at the
   * end has less left to write. A hint: it guarantees nothing, and never fails the import.
   */
  flushAhead?(): void;
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

/**
 * The store did not answer in time or at all (time-out, refused or reset connection, 5xx): a
 * fault that may go away. An import's attempt fails and is retried; a route answers 503.
 */
export class StorageUnavailableError extends Error {
  readonly code = 'storage_unavailable';
  constructor(message: string) {
    super(message);
    this.name = 'StorageUnavailableError';
  }
}

export class TargetExistsError extends Error {
  constructor(readonly path: string) {
    super(`${path} already exists`);
    this.name = 'TargetExistsError';
  }
}

/** How a store in archive mode keeps data files (archive-storage.ts); recorded in the provenance. */
export interface StoredEncryption {
  format: 'crypt4gh';
  /** Where a file's header is, relative to its dataset: `<headers>/<path>`. */
  headers: string;
  /**
   * Where the SHA-256 of a file's stored body is (hex), relative to its dataset:
   * `<body_sha256>/<path>`. Absent in datasets stored before it was recorded.
   */
  body_sha256?: string;
  /** The archive's public key the headers are encrypted for, base64. */
  recipient: string;
}

export interface StorageSystem {
  readonly description: string;
  /** Set in archive mode (STORAGE_ENCRYPTION=crypt4gh): imports store data files encrypted. */
  readonly encryption?: StoredEncryption;
  /** Where the store limits how long an object's name may be (S3: 1,024 bytes of key). */
  readonly maxKeyBytes?: number;
  /** The UTF-8 bytes of the name a logical path takes in the store (with an S3 prefix). */
  keyBytes?(path: string): number;
  /** Where a logical path is, as the catalog registration names it (a path, an s3:// URL). */
  location(path: string): string;
  exists(path: string): Promise<boolean>;
  /** Names of the children of a collection; empty when it does not exist. */
  list(path: string): Promise<string[]>;
  /**
   * An object's content, or null when absent. With `range`, only the bytes from `range.start`
   * on, at most `range.length` of them (fewer at the end, none past it): how a large object
   * (a million files' manifest or provenance) is read in bounded memory.
   */
  readObject(path: string, range?: ByteRange): Promise<Buffer | null>;
  ensureCollection(path: string): Promise<void>;
  /**
   * A staging area for what will be published at `target` (which a backend without rename, S3,
   * requires): whatever an earlier attempt left under the same id is wiped first; with
   * `adopt`, it takes over what earlier areas of the same import recorded (OpenStagingOptions).
   */
  openStaging(id: string, target?: string, options?: OpenStagingOptions): Promise<StagingArea>;
  removeStaging(id: string): Promise<void>;
  listStaging(): Promise<string[]>;
  /**
   * Moves a staging area onto `path` in one atomic step, never over an existing path.
   * With readOnly the tree is locked before it becomes visible (its root right after).
   */
  publish(stagingId: string, path: string, options: { readOnly: boolean }): Promise<void>;
  freeBytes(): Promise<number>;
  /**
   * Replaces an existing small object of a published dataset in one atomic step: a reader sees the
   * old content or the new, never a part (filesystem: a file beside it renamed over it, in a
   * read-only tree too; S3: one PutObject). Only archive key rotation uses it, on headers.
   */
  replaceObject?(path: string, content: Uint8Array): Promise<void>;
  /**
   * Where a client reads a published object's bytes: a local file that this process serves
   * (filesystem), or a URL the store serves itself, pre-signed for `seconds` (S3).
   */
  byteSource(path: string, seconds: number): Promise<ByteSource>;
  /**
   * What the store measures once for its imports, done ahead of the first (filesystem with
   * IMPORT_DIRECT_WRITES=auto: the write-path probe, which the first staging area would otherwise
   * wait for). The worker starts it as it starts; it never fails (a probe that does is measured
   * again by the next import, as before).
   */
  prepareImports?(): Promise<void>;
}

/** A part of an object: `length` (at least 1) bytes from offset `start`. */
export interface ByteRange {
  start: number;
  length: number;
}

export type ByteSource = { kind: 'file'; file: string } | { kind: 'url'; url: string };
