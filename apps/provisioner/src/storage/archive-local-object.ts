import { createHash, type Hash, randomBytes } from 'node:crypto';
import { HeaderWriter, type HeaderKeys, KEY_LENGTH, SegmentEncryptor } from '@app/crypt4gh';
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
 * on the main thread. No object is written past the page cache (the segments' 28 bytes each
 * would unalign every direct write): a file's bytes are flushed with the area's.
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
  open(targets: EncryptedTargets): BufferedObjectWriter {
    const dataKey = randomBytes(KEY_LENGTH);
    writeWhole(targets.header, this.stagingId, this.headers.build({ dataKeys: [dataKey] }));
    const body = openLocalObject(targets.body, this.stagingId);
    const encryptor = new SegmentEncryptor(dataKey);
    const hash = createHash('sha256');
    return {
      direct: false,
      write: (chunk) => writeJoined(body, encryptor.push(chunk), hash),
      commit: () => {
        try {
          writeJoined(body, encryptor.end(), hash);
        } catch (error) {
          // The copy aborts a writer whose writes fail, not one whose commit does.
          body.abort();
          throw error;
        }
        body.commit();
        writeWhole(targets.bodySha256, this.stagingId, Buffer.from(`${hash.digest('hex')}\n`));
      },
      abort: () => body.abort(),
    };
  }
}
