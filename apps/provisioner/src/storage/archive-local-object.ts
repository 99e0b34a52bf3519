import { createHash, type Hash, randomBytes } from 'node:crypto';
import { HeaderWriter, type HeaderKeys, KEY_LENGTH, SegmentEncryptor } from '@app/crypt4gh';
import { allocAligned, DIRECT_IO_ALIGNMENT } from './filesystem/direct-object-writer';
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

/** A direct body's sealed parts are gathered in this many bytes (whole blocks) per write. */
const GATHER_BYTES = 4 * 1024 * 1024;

/** The thread's gathering buffer, lent to one direct body at a time (a thread writes one at a time). */
let sharedGather: Buffer | null = null;
let gatherLent = false;

/**
 * A direct body's writes: sealed parts are copied into a page-aligned buffer and written in whole
 * blocks once it is full, so the direct writer takes them as they are (its scratch buffer would
 * copy them again, a quarter MiB at a time); what is left at the end goes last, padded there.
 */
class BlockGatherer {
  private readonly buffer: Buffer;
  private readonly borrowed: boolean;
  private held = 0;

  constructor(private readonly writer: SyncObjectWriter) {
    this.borrowed = !gatherLent;
    this.buffer = this.borrowed
      ? (sharedGather ??= allocAligned(GATHER_BYTES))
      : allocAligned(GATHER_BYTES);
    if (this.borrowed) gatherLent = true;
  }

  push(parts: readonly Buffer[], hash: Hash): void {
    for (const part of parts) {
      hash.update(part);
      let offset = 0;
      while (offset < part.length) {
        const n = Math.min(this.buffer.length - this.held, part.length - offset);
        part.copy(this.buffer, this.held, offset, offset + n);
        this.held += n;
        offset += n;
        if (this.held === this.buffer.length) {
          this.writer.write(this.buffer);
          this.held = 0;
        }
      }
    }
  }

  /** Writes what is held: whole blocks as they are, the rest through the writer's padding. */
  end(): void {
    const whole = this.held - (this.held % DIRECT_IO_ALIGNMENT);
    if (whole > 0) this.writer.write(this.buffer.subarray(0, whole));
    if (this.held > whole) this.writer.write(this.buffer.subarray(whole, this.held));
    this.held = 0;
  }

  release(): void {
    if (this.borrowed) gatherLent = false;
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
 * on the main thread. A body marked `direct` (a large file, as the plain copy's) is written past
 * the page cache in whole blocks (BlockGatherer: the segments' 28 bytes each would unalign every
 * chunk); headers, checksums and small bodies go through it and are flushed with the area's.
 */
export class EncryptedLocalObjects {
  private readonly headers: HeaderWriter;

  /** `keys`: the area's header writer (EncryptedLocalFiles.headerKeys), one per batch. */
  constructor(
    keys: HeaderKeys,
    private readonly stagingId: string,
  ) {
    this.headers = new HeaderWriter(keys);
  }

  /** Writes the file's header and creates its body, to which the copy writes plain-text. */
  open(targets: EncryptedTargets, direct = false): BufferedObjectWriter {
    const dataKey = randomBytes(KEY_LENGTH);
    writeWhole(targets.header, this.stagingId, this.headers.build({ dataKeys: [dataKey] }));
    const body = openLocalObject(targets.body, this.stagingId, direct);
    const gatherer = body.direct ? new BlockGatherer(body) : null;
    const encryptor = new SegmentEncryptor(dataKey);
    const hash = createHash('sha256');
    const write = (parts: readonly Buffer[]) => {
      if (gatherer) gatherer.push(parts, hash);
      else writeJoined(body, parts, hash);
      // Copied or written: the cipher-texts' memory is freed now, not at the collector's leisure.
      encryptor.release();
    };
    const abort = () => {
      gatherer?.release();
      body.abort();
    };
    // The copy reads, hashes and encrypts in blocking calls: the body's writes are blocking too.
    return {
      direct: false,
      write: (chunk) => write(encryptor.push(chunk)),
      commit: () => {
        try {
          write(encryptor.end());
          gatherer?.end();
        } catch (error) {
          // The copy aborts a writer whose writes fail, not one whose commit does.
          abort();
          throw error;
        }
        gatherer?.release();
        body.commit();
        writeWhole(targets.bodySha256, this.stagingId, Buffer.from(`${hash.digest('hex')}\n`));
      },
      abort,
    };
  }
}
