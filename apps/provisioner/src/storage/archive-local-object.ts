import { createHash, type Hash, randomBytes } from 'node:crypto';
import { HeaderWriter, type HeaderKeys, KEY_LENGTH, SegmentEncryptor } from '@app/crypt4gh';
import { allocAligned } from './filesystem/direct-object-writer';
import { openLocalObject } from './filesystem/local-object';
import { SealedPartsJoiner } from './sealed-parts';
import type { BufferedObjectWriter, EncryptedTargets, SyncObjectWriter } from './storage-system';

/**
 * Where a thread joins a chunk's sealed parts: one per thread (a module is loaded per thread),
 * free again as soon as the blocking write returns.
 */
const joiner = new SealedPartsJoiner();

function writeJoined(writer: SyncObjectWriter, parts: readonly Buffer[], hash: Hash): void {
  const joined = joiner.join(parts, hash);
  if (joined) writer.write(joined);
}

/** A body written direct goes to the device in writes of this many bytes (whole blocks). */
const GATHER_BYTES = 1024 * 1024;

/**
 * Where a thread gathers a body written direct (past the page cache) into whole aligned blocks:
 * sealed segments are 28 bytes longer than the plain-text's, so the read buffer's alignment is
 * lost, and a direct writer handed them would copy each into its own scratch buffer and write
 * a block run per segment. Gathered here, each part is copied once and written in 1 MiB writes
 * as they are (DirectSyncObjectWriter writes an aligned buffer uncopied); only the last, partial
 * buffer of a body goes through the writer's scratch buffer, padded and truncated at commit.
 */
class BlockGatherer {
  private buffer: Buffer | null = null;
  private held = 0;

  write(writer: SyncObjectWriter, parts: readonly Buffer[], hash: Hash): void {
    const buffer = (this.buffer ??= allocAligned(GATHER_BYTES));
    for (const part of parts) {
      hash.update(part);
      for (let at = 0; at < part.length;) {
        const n = Math.min(buffer.length - this.held, part.length - at);
        part.copy(buffer, this.held, at, at + n);
        this.held += n;
        at += n;
        if (this.held === buffer.length) {
          this.held = 0;
          writer.write(buffer);
        }
      }
    }
  }

  /** Writes what is held (the body's end) and leaves the buffer free for the next body. */
  end(writer: SyncObjectWriter): void {
    const held = this.held;
    this.held = 0;
    if (held > 0) writer.write(this.buffer!.subarray(0, held));
  }

  /** A body abandoned: what it held is dropped. */
  drop(): void {
    this.held = 0;
  }
}

/** A small object written whole and closed (a header, a body checksum). */
function writeWhole(path: string, stagingId: string, content: Buffer): void {
  const writer = openLocalObject(path, stagingId);
  try {
    writer.write(content);
  } catch (error) {
    writer.abort();
    throw error;
  }
  writer.commit();
}

/**
 * Archive mode's objects as a copy thread creates them (StagingArea.encryptedLocalFiles), in
 * blocking calls, in the order archive-storage.ts's createObject keeps on the main thread: the
 * header, closed before the body is created (a body a later attempt finds recorded always has
 * its header); the body, only sealed segments (SegmentEncryptor), never a plain byte; once the
 * body is closed, its SHA-256. What the copy hashes and verifies is the plain-text it reads, as
 * on the main thread. A large file's body is written past the page cache as a plain copy's is
 * (through a BlockGatherer); headers, body checksums and small bodies go through the page cache
 * and are flushed with the area's.
 */
export class EncryptedLocalObjects {
  private readonly headers: HeaderWriter;
  /** One body of a batch is written at a time. */
  private readonly gatherer = new BlockGatherer();

  /** `keys`: the area's header writer (EncryptedLocalFiles.headerKeys), one per batch. */
  constructor(
    keys: HeaderKeys,
    private readonly stagingId: string,
  ) {
    this.headers = new HeaderWriter(keys);
  }

  /**
   * Writes the file's header and creates its body, to which the copy writes plain-text.
   * `direct`: the body is written past the page cache (a large file, as a plain copy's is).
   */
  open(targets: EncryptedTargets, direct = false): BufferedObjectWriter {
    const dataKey = randomBytes(KEY_LENGTH);
    writeWhole(targets.header, this.stagingId, this.headers.build({ dataKeys: [dataKey] }));
    const body = openLocalObject(targets.body, this.stagingId, direct);
    const encryptor = new SegmentEncryptor(dataKey);
    const hash = createHash('sha256');
    const gatherer = body.direct ? this.gatherer : null;
    const writeParts = (parts: readonly Buffer[]): void =>
      gatherer ? gatherer.write(body, parts, hash) : writeJoined(body, parts, hash);
    return {
      // Blocking writes either way (what the copy hands over is plain-text, never written).
      direct: false,
      write: (chunk) => writeParts(encryptor.push(chunk)),
      commit: () => {
        try {
          writeParts(encryptor.end());
          gatherer?.end(body);
        } catch (error) {
          // The copy aborts a writer whose writes fail, not one whose commit does.
          gatherer?.drop();
          body.abort();
          throw error;
        }
        body.commit();
        writeWhole(targets.bodySha256, this.stagingId, Buffer.from(`${hash.digest('hex')}\n`));
      },
      abort: () => {
        gatherer?.drop();
        body.abort();
      },
    };
  }
}
