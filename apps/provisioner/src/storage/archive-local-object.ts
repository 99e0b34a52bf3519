import { createHash, type Hash } from 'node:crypto';
import { HeaderWriter, type HeaderKeys, newDataKey, SegmentEncryptor } from '@app/crypt4gh';
import { allocAligned, DIRECT_IO_ALIGNMENT } from './filesystem/direct-object-writer';
import { openLocalObject, writeLocalObject } from './filesystem/local-object';
import { SealedPartsJoiner } from './sealed-parts';
import type {
  DirectObjectWriter,
  EncryptedTargets,
  LocalObjectWriter,
  SyncObjectWriter,
} from './storage-system';

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
const GATHER_BYTES = 2 * 1024 * 1024;

/**
 * A direct body's gathering buffers in the overlapped path: one filled while the other is written
 * out on libuv's pool. The thread's pair is lent to one body at a time (a thread writes one at a
 * time); another body meanwhile gets a pair of its own.
 */
let sharedPair: Buffer[] | null = null;
let pairLent = false;

/**
 * A direct body written without blocking the copy thread on the device
 * (copyFileWithHashesOverlapped): each plain-text chunk is sealed and its sealed bytes hashed and
 * gathered as it is handed over, in order; a full 2 MiB gathering buffer goes out on libuv's pool
 * (DirectObjectWriter.writeInBackground, at its own position) while the thread reads, hashes and
 * seals on into the other one. A chunk's promise settles once it is sealed and every write it
 * started has ended, so the copy, which awaits them all before committing or aborting, never
 * closes the body under a write in flight. What is left at the end goes out in blocking calls
 * at commit, the last partial block padded by the body's writer and the file cut to its length.
 */
class OverlappedSealedBody implements DirectObjectWriter {
  readonly direct = true;
  private readonly buffers: Buffer[];
  private readonly borrowed: boolean;
  /** The buffer being filled, and how much of it. */
  private current = 0;
  private held = 0;
  /** Per buffer, its write in flight (settled: ended). */
  private readonly inFlight: (Promise<void> | null)[] = [null, null];
  /** The previous chunk's sealing: chunks are sealed in the order they are handed over. */
  private tail: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly body: DirectObjectWriter,
    private readonly encryptor: SegmentEncryptor,
    private readonly hash: Hash,
  ) {
    this.borrowed = !pairLent;
    this.buffers = this.borrowed
      ? (sharedPair ??= [allocAligned(GATHER_BYTES), allocAligned(GATHER_BYTES)])
      : [allocAligned(GATHER_BYTES), allocAligned(GATHER_BYTES)];
    if (this.borrowed) pairLent = true;
  }

  /** The blocking path (copyFileWithHashesSync): the same sealing, every full buffer written at once. */
  write(chunk: Uint8Array): void {
    for (const part of this.encryptor.push(chunk)) this.gatherSync(part);
    this.encryptor.release();
  }

  writeInBackground(chunk: Uint8Array): Promise<void> {
    const sealed = this.tail.then(() => this.seal(chunk));
    // The next chunk waits for this one's sealing, not for its writes, whatever its outcome.
    this.tail = sealed.catch(() => undefined);
    return sealed.then(allEnded);
  }

  commit(): void {
    try {
      for (const part of this.encryptor.end()) this.gatherSync(part);
      this.encryptor.release();
      const buffer = this.buffers[this.current];
      const whole = this.held - (this.held % DIRECT_IO_ALIGNMENT);
      if (whole > 0) this.body.write(buffer.subarray(0, whole));
      if (this.held > whole) this.body.write(buffer.subarray(whole, this.held));
      this.held = 0;
    } catch (error) {
      // The copy aborts a writer whose writes fail, not one whose commit does.
      this.abort();
      throw error;
    }
    this.giveBack();
    this.body.commit();
  }

  abort(): void {
    this.giveBack();
    this.body.abort();
  }

  private giveBack(): void {
    if (this.borrowed) pairLent = false;
  }

  /** Seals `chunk` into the gathering buffers: the writes it started, to be awaited. */
  private async seal(chunk: Uint8Array): Promise<Promise<void>[]> {
    const started: Promise<void>[] = [];
    const parts = this.encryptor.push(chunk);
    try {
      for (const part of parts) {
        this.hash.update(part);
        let offset = 0;
        while (offset < part.length) {
          // The buffer about to be filled may still be going out (the one before last): wait.
          const pending = this.inFlight[this.current];
          if (pending) await pending;
          const buffer = this.buffers[this.current];
          const n = Math.min(buffer.length - this.held, part.length - offset);
          part.copy(buffer, this.held, offset, offset + n);
          this.held += n;
          offset += n;
          if (this.held === buffer.length) started.push(this.sendFull());
        }
      }
    } catch (error) {
      // An earlier write failed: the writes this chunk started still use the body, and the copy
      // closes it once this chunk's promise settles.
      await Promise.allSettled(started);
      throw error;
    }
    // Copied: the cipher-texts' memory is freed now (the parts are views of nothing after it).
    this.encryptor.release();
    return started;
  }

  /** Sends the full buffer being filled and moves to the other. */
  private sendFull(): Promise<void> {
    const index = this.current;
    const write = this.body.writeInBackground(this.buffers[index]);
    const tracked = write.finally(() => {
      if (this.inFlight[index] === tracked) this.inFlight[index] = null;
    });
    // Observed here; its failure is thrown by the chunk's promise that started it.
    tracked.catch(() => undefined);
    this.inFlight[index] = tracked;
    this.current = 1 - index;
    this.held = 0;
    return tracked;
  }

  private gatherSync(part: Buffer): void {
    this.hash.update(part);
    let offset = 0;
    while (offset < part.length) {
      const buffer = this.buffers[this.current];
      const n = Math.min(buffer.length - this.held, part.length - offset);
      part.copy(buffer, this.held, offset, offset + n);
      this.held += n;
      offset += n;
      if (this.held === buffer.length) {
        this.body.write(buffer);
        this.held = 0;
      }
    }
  }
}

/**
 * Settles once every write has ended, with the first failure if any: Promise.all would settle at
 * the first failure, while another write still uses the body.
 */
async function allEnded(writes: Promise<void>[]): Promise<void> {
  const failed = (await Promise.allSettled(writes)).find((result) => result.status === 'rejected');
  if (failed) throw failed.reason;
}

/**
 * Archive mode's objects as a copy thread creates them (StagingArea.encryptedLocalFiles), in
 * blocking calls, in the order archive-storage.ts's createObject keeps on the main thread: the
 * header, closed before the body is created (a body a later attempt finds recorded always has
 * its header); the body, only sealed segments (SegmentEncryptor), never a plain byte; once the
 * body is closed, its SHA-256. What the copy hashes and verifies is the plain-text it reads, as
 * on the main thread. A body marked `direct` (a large file, as the plain copy's) is written past
 * the page cache in whole blocks (OverlappedSealedBody: the segments' 28 bytes each would unalign every
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

  /**
   * Writes the file's header and creates its body, to which the copy writes plain-text: a direct
   * body as a DirectObjectWriter (OverlappedSealedBody), so the copy overlaps its reads and writes
   * with the sealing; any other through the page cache in blocking calls.
   */
  open(targets: EncryptedTargets, direct = false): LocalObjectWriter {
    const dataKey = newDataKey();
    writeLocalObject(targets.header, this.stagingId, this.headers.build({ dataKeys: [dataKey] }));
    const body = openLocalObject(targets.body, this.stagingId, direct);
    const encryptor = new SegmentEncryptor(dataKey);
    const hash = createHash('sha256');
    const checksum = () =>
      writeLocalObject(targets.bodySha256, this.stagingId, Buffer.from(`${hash.digest('hex')}\n`));
    if (body.direct) {
      const sealed = new OverlappedSealedBody(body, encryptor, hash);
      return {
        direct: true,
        write: (chunk) => sealed.write(chunk),
        writeInBackground: (chunk) => sealed.writeInBackground(chunk),
        commit: () => {
          sealed.commit();
          checksum();
        },
        abort: () => sealed.abort(),
      };
    }
    const write = (parts: readonly Buffer[]) => {
      writeJoined(body, parts, hash);
      // Copied or written: the cipher-texts' memory is freed now, not at the collector's leisure.
      encryptor.release();
    };
    // The copy reads, hashes and encrypts in blocking calls: the body's writes are blocking too.
    return {
      direct: false,
      write: (chunk) => write(encryptor.push(chunk)),
      commit: () => {
        try {
          write(encryptor.end());
        } catch (error) {
          // The copy aborts a writer whose writes fail, not one whose commit does.
          body.abort();
          throw error;
        }
        body.commit();
        checksum();
      },
      abort: () => body.abort(),
    };
  }
}
