import { randomBytes } from 'node:crypto';
import {
  bodySize,
  buildHeader,
  KEY_LENGTH,
  plaintextSize,
  SegmentEncryptor,
} from '@app/crypt4gh';
import { PROVENANCE_DIR } from './storage-layout';
import type {
  InheritedFiles,
  ObjectWriter,
  StagedFile,
  StagingArea,
  StorageSystem,
} from './storage-system';

/**
 * Archive mode (STORAGE_ENCRYPTION=crypt4gh, docs/decisions/archive-encryption.md): every data
 * file an import stages is stored as a Crypt4GH body for the archive's public key, its header
 * apart from it (as NeIC SDA keeps headers in its database, not in the archive) under
 * HEADERS_DIR of the same dataset. The copy hands the writer plain-text it has already hashed,
 * so the checksums it verifies and records stay those of the plain-text; no plain byte of a
 * data file reaches the store.
 */
export const HEADERS_DIR = `${PROVENANCE_DIR}/c4gh-headers`;

/** Where the header of the data file at `path` (relative to its dataset) is stored. */
export function headerPath(path: string): string {
  return `${HEADERS_DIR}/${path}`;
}

/** T with every member required to be named, optional ones as possibly undefined. */
type Complete<T> = { [K in keyof Required<T>]: T[K] };

/** Plain-text written to it leaves as the segments of a body (SegmentEncryptor). */
function encryptingWriter(writer: ObjectWriter, dataKey: Buffer): ObjectWriter {
  const encryptor = new SegmentEncryptor(dataKey);
  const writeAll = async (parts: Buffer[]): Promise<void> => {
    // One write per sealed segment would be three per 64 KiB: joined, a chunk is one write.
    if (parts.length > 0) await writer.write(parts.length === 1 ? parts[0] : Buffer.concat(parts));
  };
  const encrypting: Complete<ObjectWriter> = {
    write: (chunk) => writeAll(encryptor.push(chunk)),
    commit: async () => {
      await writeAll(encryptor.end());
      await writer.commit();
    },
    abort: () => writer.abort(),
    // Parts an upload left are never reused: the next attempt encrypts under another data key.
    suspend: undefined,
    reusedBytes: undefined,
  };
  return encrypting;
}

/** What the area holds is bodies: sizes are the plain-text's to the pipeline, the body's to the store. */
function plaintextFiles(inherited: InheritedFiles): InheritedFiles {
  return {
    get length() {
      return inherited.length;
    },
    at(index) {
      const file = inherited.at(index);
      if (file === undefined) return undefined;
      try {
        return { ...file, size: plaintextSize(file.size) };
      } catch {
        // No body has that size: not one this mode wrote; -1 matches no planned file.
        return { ...file, size: -1 };
      }
    },
  };
}

function archiveArea(area: StagingArea, recipient: Buffer): StagingArea {
  const archived: Complete<StagingArea> = {
    id: area.id,
    inherited: plaintextFiles(area.inherited),
    // The copy threads would create plain files on the host themselves: here every object is
    // created through createObject (small files are still read and hashed on the threads).
    localFiles: undefined,
    copyLanes: area.copyLanes,
    copyBufferBytes: area.copyBufferBytes,
    createObject: async (path, size) => {
      const dataKey = randomBytes(KEY_LENGTH);
      // The header first: a body that is recorded (after its commit) always has its header.
      await area.writeSmallObject(
        headerPath(path),
        buildHeader({ dataKeys: [dataKey] }, [recipient]),
      );
      const body = await area.createObject(path, size === undefined ? undefined : bodySize(size));
      return encryptingWriter(body, dataKey);
    },
    // The stored manifest, provenance and submission document: metadata, as SDA's database is.
    writeSmallObject: (path, content) => area.writeSmallObject(path, content),
    createCollection: (path) => area.createCollection(path),
    sync: () => area.sync(),
    discardExcept: (keep) =>
      area.discardExcept((path) =>
        path.startsWith(`${HEADERS_DIR}/`) ? keep(path.slice(HEADERS_DIR.length + 1)) : keep(path),
      ),
    record: (files: readonly StagedFile[]) =>
      area.record(files.map((file) => ({ ...file, size: bodySize(file.size) }))),
  };
  return archived;
}

/**
 * The storage an import writes through in archive mode: data files are encrypted for
 * `recipient` (the archive's public key) as they are written; everything else passes through.
 */
export function archiveStorage(storage: StorageSystem, recipient: Buffer): StorageSystem {
  // Every member named: a member added to StorageSystem and not passed on is a compile error.
  const archived: Complete<StorageSystem> = {
    description: storage.description,
    encryption: { format: 'crypt4gh', headers: HEADERS_DIR, recipient: recipient.toString('base64') },
    // A file's longest key is its header's, HEADERS_DIR deeper than its body's.
    maxKeyBytes:
      storage.maxKeyBytes === undefined
        ? undefined
        : storage.maxKeyBytes - Buffer.byteLength(`${HEADERS_DIR}/`),
    keyBytes: storage.keyBytes && ((path) => storage.keyBytes!(path)),
    location: (path) => storage.location(path),
    exists: (path) => storage.exists(path),
    list: (path) => storage.list(path),
    readObject: (path, range) => storage.readObject(path, range),
    listStaging: () => storage.listStaging(),
    freeBytes: () => storage.freeBytes(),
    byteSource: (path, seconds) => storage.byteSource(path, seconds),
    ensureCollection: (path) => storage.ensureCollection(path),
    openStaging: async (id, target, options) =>
      archiveArea(await storage.openStaging(id, target, options), recipient),
    removeStaging: (id) => storage.removeStaging(id),
    publish: (stagingId, path, options) => storage.publish(stagingId, path, options),
  };
  return archived;
}
