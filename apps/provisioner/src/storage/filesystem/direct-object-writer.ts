import {
  closeSync,
  constants,
  ftruncateSync,
  openSync,
  unlinkSync,
  write,
  writeSync,
} from 'node:fs';
import type { DirectObjectWriter } from '../storage-system';

/**
 * What O_DIRECT asks of every write: memory address, file offset and length multiples of the
 * device's logical block size. 4 KiB covers the block sizes in use (512 B and 4 KiB).
 */
export const DIRECT_IO_ALIGNMENT = 4096;
/** WebAssembly memory grows in pages of this size; its start is page-aligned by the engine. */
const WASM_PAGE_BYTES = 64 * 1024;
/** Staging buffer for chunks that do not meet the alignment (the common ones do). */
const SCRATCH_BYTES = 256 * 1024;

/**
 * Objects from this size on are written direct when the setting allows it (IMPORT_DIRECT_WRITES).
 * Below it the page cache is the better deal: a small file written direct waits for the device,
 * where through the cache thousands of them reach it in one syncfs.
 */
export const DIRECT_WRITE_MIN_BYTES = 1024 * 1024;

/** The one WebAssembly API used here (the project's TypeScript libraries do not declare it). */
declare const WebAssembly: {
  Memory: new (descriptor: { initial: number; maximum: number }) => { buffer: ArrayBuffer };
};

const alignedMemory = new WeakSet<ArrayBufferLike>();

/**
 * A buffer whose memory starts on a page boundary, as O_DIRECT needs. Node's own buffers come
 * from malloc, 16-byte aligned at best; a WebAssembly memory is mapped by V8 on its own pages.
 */
export function allocAligned(bytes: number): Buffer {
  const pages = Math.max(1, Math.ceil(bytes / WASM_PAGE_BYTES));
  const memory = new WebAssembly.Memory({ initial: pages, maximum: pages });
  alignedMemory.add(memory.buffer);
  return Buffer.from(memory.buffer, 0, bytes);
}

function isAligned(chunk: Uint8Array): boolean {
  return (
    alignedMemory.has(chunk.buffer) &&
    chunk.byteOffset % DIRECT_IO_ALIGNMENT === 0 &&
    chunk.length % DIRECT_IO_ALIGNMENT === 0
  );
}

export const roundUpToBlock = (n: number): number =>
  Math.ceil(n / DIRECT_IO_ALIGNMENT) * DIRECT_IO_ALIGNMENT;

/** Once a filesystem refuses O_DIRECT, this thread stops asking (it is one storage root). */
let directRefused = false;

/**
 * The thread's scratch buffer, lent to one writer at a time: a thread writes its objects one
 * after the other, so one buffer serves them all (a writer that finds it lent gets its own).
 */
let sharedScratch: Buffer | null = null;
let scratchLent = false;

/**
 * Creates `path` exclusively and read-only for writes that bypass the page cache, or returns
 * null when the filesystem does not support them (the caller creates it buffered instead).
 * Linux checks O_DIRECT support only after creating the file, so a refusal leaves an empty file
 * of ours behind: it is removed here, inside the caller's staging area.
 */
export function openDirect(path: string, mode: number): number | null {
  if (directRefused) return null;
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_DIRECT;
  try {
    return openSync(path, flags, mode);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EINVAL') throw error;
    directRefused = true;
    try {
      unlinkSync(path);
    } catch (unlinkError) {
      if ((unlinkError as NodeJS.ErrnoException).code !== 'ENOENT') throw unlinkError;
    }
    return null;
  }
}

/**
 * A SyncObjectWriter over a descriptor opened with O_DIRECT: the bytes go from the caller's
 * buffer to the device without being copied into the page cache. On the virtual machines
 * measured (docs/benchmarks.md), that copy cost 0.5 to 3 s of CPU per GiB, varying with the
 * host; here it costs nothing, and a bulk import does not evict what the server keeps in its
 * cache. The data still counts as durable only after
 * the staging area's sync() (the journal and the device cache).
 *
 * Chunks from allocAligned buffers, of whole blocks, are written as they are; anything else is
 * gathered into an aligned scratch buffer first. The last partial block is written padded with
 * zeros, and the file truncated to its real length.
 */
export class DirectSyncObjectWriter implements DirectObjectWriter {
  readonly direct = true;
  private position = 0;
  private scratch: Buffer | null = null;
  /** Bytes at the start of the scratch buffer not written yet (less than one block after a write). */
  private held = 0;
  private borrowedScratch = false;

  constructor(private readonly fd: number) {}

  write(chunk: Uint8Array): void {
    if (this.held === 0 && isAligned(chunk)) {
      this.writeBlocks(chunk);
      return;
    }
    const scratch = (this.scratch ??= this.borrowScratch());
    let offset = 0;
    while (offset < chunk.length) {
      const n = Math.min(scratch.length - this.held, chunk.length - offset);
      scratch.set(chunk.subarray(offset, offset + n), this.held);
      this.held += n;
      offset += n;
      const whole = this.held - (this.held % DIRECT_IO_ALIGNMENT);
      if (whole === 0) continue;
      this.writeBlocks(scratch.subarray(0, whole));
      scratch.copyWithin(0, whole, this.held);
      this.held -= whole;
    }
  }

  /**
   * The whole-block chunks of an allocAligned buffer are written on libuv's thread pool, at the
   * position they take in the object, so the caller's thread can read and hash the next chunk
   * while the device takes this one. Anything else (the last, partial chunk of a file) goes
   * through the scratch buffer in blocking calls, as write() does, and commit() pads it.
   */
  writeInBackground(chunk: Uint8Array): Promise<void> {
    if (this.held > 0 || !isAligned(chunk)) {
      this.write(chunk);
      return Promise.resolve();
    }
    const position = this.position;
    this.position += chunk.length;
    return writeFully(this.fd, chunk, position);
  }

  commit(): void {
    try {
      if (this.held > 0) {
        const length = this.position + this.held;
        const block = this.scratch!.subarray(0, roundUpToBlock(this.held));
        block.fill(0, this.held);
        this.writeBlocks(block);
        ftruncateSync(this.fd, length);
      }
    } finally {
      this.close();
    }
  }

  abort(): void {
    this.close();
  }

  private close(): void {
    if (this.borrowedScratch) scratchLent = false;
    closeSync(this.fd);
  }

  private borrowScratch(): Buffer {
    if (scratchLent) return allocAligned(SCRATCH_BYTES);
    scratchLent = this.borrowedScratch = true;
    return (sharedScratch ??= allocAligned(SCRATCH_BYTES));
  }

  private writeBlocks(blocks: Uint8Array): void {
    let offset = 0;
    while (offset < blocks.length) {
      const written = writeSync(this.fd, blocks, offset, blocks.length - offset, this.position);
      offset += written;
      this.position += written;
    }
  }
}

/** write(2) at `position` until every byte is taken (as writeSync's loop above does). */
function writeFully(fd: number, data: Uint8Array, position: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const from = (offset: number): void =>
      write(fd, data, offset, data.length - offset, position + offset, (error, written) => {
        if (error) reject(error);
        else if (offset + written < data.length) from(offset + written);
        else resolve();
      });
    from(0);
  });
}
