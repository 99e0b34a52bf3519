import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import {
  bodySize,
  Crypt4ghError,
  decrypt,
  headerAt,
  HeaderWriter,
  newDataKey,
  openHeader,
  plaintextSize,
  secretKey,
  type SecretKey,
  SegmentEncryptor,
} from '@app/crypt4gh';
import { type ArchiveKey, archiveSecretKeys } from './archive-key';
import { type Complete, storageReads } from './storage-decorator';
import { PROVENANCE_DIR } from './storage-layout';
import type {
  DepositedPlaintext,
  EncryptedLocalFiles,
  InheritedFiles,
  LocalFiles,
  ObjectWriter,
  StagedFile,
  StagingArea,
  StorageSystem,
} from './storage-system';
import { SealedPartsJoiner } from './sealed-parts';
import { SEAL_SLOT_BYTES, type SealingThreads, type ThreadSealedBody } from './sealing-threads';

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

/**
 * The SHA-256 of each stored body (the bytes in storage, not the plain-text), written once the
 * body is complete: `<BODY_CHECKSUMS_DIR>/<path>` holds it in hex. An auditor checks a body's
 * fixity with it without the archive key; DRS gives it beside the plain-text's. A rotation
 * rewrites headers only, so it stays true.
 */
export const BODY_CHECKSUMS_DIR = `${PROVENANCE_DIR}/c4gh-body-sha256`;

/** Where the stored body's SHA-256 of the data file at `path` (relative to its dataset) is. */
export function bodyChecksumPath(path: string): string {
  return `${BODY_CHECKSUMS_DIR}/${path}`;
}

/** A file its depositor encrypted for the archive key: stored re-wrapped, under its name without this. */
export const DEPOSIT_SUFFIX = '.c4gh';

/** Whether the file at `path` is a deposit already encrypted (archive mode only). */
export function isEncryptedDeposit(path: string): boolean {
  return (
    path.endsWith(DEPOSIT_SUFFIX) &&
    path.length > DEPOSIT_SUFFIX.length &&
    !path.endsWith(`/${DEPOSIT_SUFFIX}`)
  );
}

/** The name an encrypted deposit is stored and served under. */
export function depositStoredPath(path: string): string {
  return path.slice(0, -DEPOSIT_SUFFIX.length);
}

/**
 * Plain-text written to it leaves as the segments of a body (SegmentEncryptor); once the body is
 * committed, its SHA-256 is handed to `committed` (before the commit resolves: a body recorded
 * always has its checksum).
 */
function encryptingWriter(
  writer: ObjectWriter,
  dataKey: Buffer,
  committed: (bodySha256: string) => Promise<void>,
): ObjectWriter {
  const encryptor = new SegmentEncryptor(dataKey);
  const hash = createHash('sha256');
  const joiner = new SealedPartsJoiner();
  const writeAll = async (parts: Buffer[]): Promise<void> => {
    const joined = joiner.join(parts, hash);
    if (joined) await writer.write(joined);
  };
  const encrypting: Complete<ObjectWriter> = {
    write: (chunk) => writeAll(encryptor.push(chunk)),
    commit: async () => {
      await writeAll(encryptor.end());
      await writer.commit();
      await committed(hash.digest('hex'));
    },
    abort: () => writer.abort(),
    // Parts an upload left are never reused: the next attempt encrypts under another data key.
    // Encrypted as it comes, chunk by chunk.
    writev: undefined,
    suspend: undefined,
    reusedBytes: undefined,
    plaintext: undefined,
  };
  return encrypting;
}

/**
 * encryptingWriter for a large body, sealed on a sealing thread (sealing-threads.ts): the
 * plain-text is copied to the thread, which seals and hashes it and frees each segment's
 * cipher-text as soon as it is copied out; this thread only writes the sealed bytes to the store.
 */
async function threadSealedWriter(
  writer: ObjectWriter,
  dataKey: Buffer,
  sealer: SealingThreads,
  committed: (bodySha256: string) => Promise<void>,
): Promise<ObjectWriter> {
  let body: ThreadSealedBody;
  try {
    body = await sealer.open(dataKey, writer);
  } catch (error) {
    await writer.abort().catch(() => undefined);
    throw error;
  }
  const sealed: Complete<ObjectWriter> = {
    write: (chunk) => body.write(chunk),
    commit: async () => {
      const sha256 = await body.end();
      await writer.commit();
      await committed(sha256);
    },
    abort: async () => {
      await body.abort();
      await writer.abort();
    },
    writev: undefined,
    suspend: undefined,
    reusedBytes: undefined,
    plaintext: undefined,
  };
  return sealed;
}

/**
 * A deposited Crypt4GH file as it is written: its header is read as it arrives, opened with the
 * archive key and written again for the archive key alone (same data key, same edit list, the
 * depositor's other packets dropped); its body goes to the store byte for byte. Meanwhile the
 * whole stream is decrypted in memory, one segment at a time, for the plain-text's size and
 * checksums (every segment's MAC is verified): nothing of it is written anywhere.
 */
function rewrappingWriter(
  writeHeader: (header: Buffer) => Promise<void>,
  createBody: (headerLength: number) => Promise<ObjectWriter>,
  committed: (bodySha256: string) => Promise<void>,
  keys: readonly SecretKey[],
  headers: HeaderWriter,
  storedPath: string,
): ObjectWriter {
  const bodyHash = createHash('sha256');
  let head: Buffer | null = Buffer.alloc(0);
  let body: ObjectWriter | null = null;
  let plaintext: DepositedPlaintext | undefined;
  const input = new PassThrough({ highWaterMark: 1024 * 1024 });
  const sha256 = createHash('sha256');
  const md5 = createHash('md5');
  let size = 0;
  const plain = (async () => {
    for await (const piece of decrypt(
      input,
      keys.map(({ secret }) => secret),
    )) {
      sha256.update(piece);
      md5.update(piece);
      size += piece.length;
    }
  })();
  // Awaited at commit; until then a failure shows through feed (never unhandled).
  plain.catch(() => undefined);
  const feed = async (chunk: Uint8Array): Promise<void> => {
    // A copy: the caller reuses its buffer once the write resolves, the decryption may not have
    // reached it by then.
    if (!input.write(Buffer.from(chunk))) await Promise.race([once(input, 'drain'), plain]);
  };
  const rewrapping: Complete<ObjectWriter> = {
    write: async (chunk) => {
      await feed(chunk);
      if (head === null) {
        bodyHash.update(chunk);
        return body!.write(chunk);
      }
      head = Buffer.concat([head, chunk]);
      const found = await headerAt(head);
      if (found === undefined) return;
      const opened = openHeader(found.packets, keys);
      // Served whole, its size and ranges counted on the body: an edit list would change both.
      if (opened.editList !== undefined)
        throw new Crypt4ghError(
          'unsupported',
          'A deposit with an edit list is not taken: deposit the whole file',
        );
      await writeHeader(headers.build(opened));
      body = await createBody(found.length);
      const rest = head.subarray(found.length);
      head = null;
      if (rest.length > 0) {
        bodyHash.update(rest);
        await body.write(rest);
      }
    },
    commit: async () => {
      input.end();
      await plain;
      if (body === null)
        throw new Crypt4ghError('truncated', 'The file ends before its Crypt4GH header does');
      await body.commit();
      await committed(bodyHash.digest('hex'));
      plaintext = {
        storedPath,
        size,
        sha256: sha256.digest('hex'),
        md5: md5.digest('hex'),
      };
    },
    abort: async () => {
      input.destroy();
      await body?.abort();
    },
    // Encrypted as it comes, chunk by chunk.
    writev: undefined,
    suspend: undefined,
    reusedBytes: undefined,
    get plaintext() {
      return plaintext;
    },
  };
  return rewrapping;
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

/**
 * A file's header or body checksum, written as an object of the area at once (not a small object
 * kept for publication, which S3 holds in memory until then): it is durable before the body is
 * recorded, so a later attempt that keeps the body finds it beside it (discardExcept keeps it).
 */
async function writeCompanion(area: StagingArea, path: string, content: Buffer): Promise<void> {
  const writer = await area.createObject(path, content.length);
  try {
    await writer.write(content);
    await writer.commit();
  } catch (error) {
    await writer.abort().catch(() => undefined);
    throw error;
  }
}

/**
 * The copy threads' way to create what createObject creates, in the same order, on a backend
 * whose objects are files on this host (archive-local-object.ts): each file's three objects
 * prepared (their directories made and counted as the area's, so sync() and the record's flush
 * cover them) and the area's header writer. Measured (issue 57 item 6): creating them from the
 * main thread, nine file operations a file through libuv's pool, was most of archive mode's CPU
 * on small files.
 */
function encryptedLocalFiles(local: LocalFiles, headers: HeaderWriter): EncryptedLocalFiles {
  return {
    prepare: (path) => {
      // A deposit's header is the depositor's, re-wrapped as it arrives: createObject only.
      if (isEncryptedDeposit(path))
        throw new Error(`an encrypted deposit is stored through createObject: ${path}`);
      return {
        header: local.prepare(headerPath(path)),
        body: local.prepare(path),
        bodySha256: local.prepare(bodyChecksumPath(path)),
      };
    },
    headerKeys: headers.keys,
    directWriteMinBytes: local.directWriteMinBytes,
  };
}

function archiveArea(area: StagingArea, key: ArchiveKey, sealer?: SealingThreads): StagingArea {
  // One writer key pair per area, so one X25519 exchange per dataset, not one per file.
  const headers = new HeaderWriter([key.publicKey]);
  // A deposit made for the previous key during a rotation is taken too (and re-wrapped for this one).
  const keys = archiveSecretKeys(key).map(secretKey);
  const archived: Complete<StagingArea> = {
    id: area.id,
    inherited: plaintextFiles(area.inherited),
    // The copy threads would create plain files on the host themselves: they are given
    // encryptedLocalFiles instead, and create each file encrypted, as createObject does.
    localFiles: undefined,
    encryptedLocalFiles: area.localFiles && encryptedLocalFiles(area.localFiles, headers),
    // Every data file is encrypted on its way in: a server-side copy would store it in the clear.
    copyObjectFrom: undefined,
    copyLanes: area.copyLanes,
    copyBufferBytes: area.copyBufferBytes,
    flushAhead: area.flushAhead && (() => area.flushAhead!()),
    // A body is stored at its plan path (a deposit's elsewhere, and the companions: recorded by path).
    expectFiles: area.expectFiles && ((paths) => area.expectFiles!(paths)),
    createObject: async (path, size) => {
      if (isEncryptedDeposit(path)) {
        const stored = depositStoredPath(path);
        return rewrappingWriter(
          (header) => writeCompanion(area, headerPath(stored), header),
          (headerLength) =>
            area.createObject(stored, size === undefined ? undefined : size - headerLength),
          (sha256) => writeCompanion(area, bodyChecksumPath(stored), Buffer.from(`${sha256}\n`)),
          keys,
          headers,
          stored,
        );
      }
      const dataKey = newDataKey();
      // The header first: a body that is recorded (after its commit) always has its header.
      await writeCompanion(area, headerPath(path), headers.build({ dataKeys: [dataKey] }));
      const body = await area.createObject(path, size === undefined ? undefined : bodySize(size));
      const committed = (sha256: string) =>
        writeCompanion(area, bodyChecksumPath(path), Buffer.from(`${sha256}\n`));
      // A body of a slot or more is sealed on a thread; a smaller one is a single chunk, sealed
      // here in less time than a round trip to a thread takes.
      if (sealer && size !== undefined && size >= SEAL_SLOT_BYTES)
        return threadSealedWriter(body, dataKey, sealer, committed);
      return encryptingWriter(body, dataKey, committed);
    },
    // The stored manifest, provenance and submission document: metadata, as SDA's database is.
    writeSmallObject: (path, content) => area.writeSmallObject(path, content),
    createCollection: (path) => area.createCollection(path),
    sync: () => area.sync(),
    // A kept body's header and checksum are kept with it (the area keeps what `keep` accepts).
    discardExcept: (keep) =>
      area.discardExcept((path) => {
        for (const dir of [HEADERS_DIR, BODY_CHECKSUMS_DIR]) {
          if (path.startsWith(`${dir}/`)) return keep(path.slice(dir.length + 1));
        }
        return keep(path);
      }),
    // A crash must not leave a recorded body without its header or checksum: all three durable.
    record: (files: readonly StagedFile[]) =>
      area.record(
        files.map((file) => ({ ...file, size: bodySize(file.size) })),
        ({ path }) => [headerPath(path), path, bodyChecksumPath(path)],
      ),
  };
  return archived;
}

/**
 * The storage an import writes through in archive mode: data files are encrypted for
 * the archive's public key as they are written, and files deposited encrypted for it (`*.c4gh`)
 * are re-wrapped; everything else passes through.
 */
export function archiveStorage(
  storage: StorageSystem,
  key: ArchiveKey,
  sealer?: SealingThreads,
): StorageSystem {
  const recipient = key.publicKey;
  const archived: Complete<StorageSystem> = {
    ...storageReads(storage),
    encryption: {
      format: 'crypt4gh',
      headers: HEADERS_DIR,
      body_sha256: BODY_CHECKSUMS_DIR,
      recipient: recipient.toString('base64'),
    },
    // A file's longest key is its header's, HEADERS_DIR deeper than its body's.
    maxKeyBytes:
      storage.maxKeyBytes === undefined
        ? undefined
        : storage.maxKeyBytes - Buffer.byteLength(`${HEADERS_DIR}/`),
    ensureCollection: (path) => storage.ensureCollection(path),
    openStaging: async (id, target, options) =>
      archiveArea(await storage.openStaging(id, target, options), key, sealer),
    removeStaging: (id) => storage.removeStaging(id),
    publish: (stagingId, path, options) => storage.publish(stagingId, path, options),
    replaceObject:
      storage.replaceObject && ((path, content) => storage.replaceObject!(path, content)),
    prepareImports: storage.prepareImports && (() => storage.prepareImports!()),
  };
  return archived;
}
