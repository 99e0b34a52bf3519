/** Bytes lent by the pool: `bytes` is the caller's until it calls release(), once. */
export interface PooledBytes {
  readonly bytes: Buffer;
  release(): void;
}

/** A part buffer that small objects are carved from, given back once every piece is. */
interface Slab {
  buffer: Buffer;
  used: number;
  pieces: number;
  retired: boolean;
}

interface Request {
  /** Whole part buffer (null) or a piece of this many bytes. */
  pieceBytes: number | null;
  resolve: (lent: PooledBytes) => void;
}

/**
 * The upload memory of the whole worker: at most `count` buffers of `partBytes`, allocated once
 * and reused by every import (S3_UPLOAD_CONCURRENCY × S3_PART_BYTES, whatever IMPORT_CONCURRENCY
 * is). A buffer freed to V8 stays resident until a collection gets to it; with a new 8 MiB buffer
 * per part, a 2 GiB upload kept a hundred megabytes of dead parts in the resident set, so none
 * are freed. Small objects (up to a quarter of a part) are cut from a shared part buffer, a slab,
 * so thousands of them in flight hold a few parts' worth of memory, not a part each. Requests are
 * served first come, first served: a large file's part is not starved by a stream of small files.
 */
export class PartBufferPool {
  private readonly free: Buffer[] = [];
  private allocated = 0;
  private slab: Slab | null = null;
  private readonly waiting: Request[] = [];

  constructor(
    readonly partBytes: number,
    readonly count: number,
  ) {
    if (!(count >= 1) || !(partBytes >= 1)) throw new Error('a part buffer pool needs buffers');
  }

  /** The most bytes the pool ever holds. */
  get capacityBytes(): number {
    return this.partBytes * this.count;
  }

  /** Buffers allocated so far (never more than `count`); for tests and metrics. */
  get allocatedBuffers(): number {
    return this.allocated;
  }

  /** Buffers idle in the pool (neither lent nor a slab with pieces out). */
  get idleBuffers(): number {
    return this.free.length + (this.slab && this.slab.pieces === 0 ? 1 : 0);
  }

  /** Objects up to this size get a piece of a slab; larger ones a whole part buffer. */
  get pieceLimit(): number {
    return Math.max(1, Math.floor(this.partBytes / 4));
  }

  /** A whole part buffer (`partBytes` long). */
  takePart(): Promise<PooledBytes> {
    return this.request(null);
  }

  /** `bytes` (1 to pieceLimit) from a slab, or a whole part buffer's start beyond that limit. */
  take(bytes: number): Promise<PooledBytes> {
    if (!(bytes >= 1) || bytes > this.partBytes)
      throw new Error(`a pooled buffer is 1 to ${this.partBytes} bytes, not ${bytes}`);
    return this.request(bytes <= this.pieceLimit ? bytes : null);
  }

  private request(pieceBytes: number | null): Promise<PooledBytes> {
    if (this.waiting.length === 0) {
      const lent = this.serve(pieceBytes);
      if (lent) return Promise.resolve(lent);
    }
    return new Promise((resolve) => this.waiting.push({ pieceBytes, resolve }));
  }

  private serve(pieceBytes: number | null): PooledBytes | null {
    if (pieceBytes === null) {
      const buffer = this.takeBuffer();
      return buffer ? this.lendWhole(buffer) : null;
    }
    let slab = this.slab;
    if (slab && slab.pieces === 0) slab.used = 0;
    if (!slab || slab.buffer.length - slab.used < pieceBytes) {
      const buffer = this.takeBuffer();
      if (!buffer) return null;
      if (slab) slab.retired = true;
      slab = this.slab = { buffer, used: 0, pieces: 0, retired: false };
    }
    return this.lendPiece(slab, pieceBytes);
  }

  private takeBuffer(): Buffer | null {
    const reused = this.free.pop();
    if (reused) return reused;
    // An idle slab is a free buffer too: without this, small objects could keep every buffer.
    if (this.slab && this.slab.pieces === 0) {
      const buffer = this.slab.buffer;
      this.slab = null;
      return buffer;
    }
    if (this.allocated === this.count) return null;
    this.allocated++;
    return Buffer.allocUnsafeSlow(this.partBytes);
  }

  private lendWhole(buffer: Buffer): PooledBytes {
    let released = false;
    return {
      bytes: buffer,
      release: () => {
        if (released) throw new Error('pooled buffer released twice');
        released = true;
        this.giveBack(buffer);
      },
    };
  }

  private lendPiece(slab: Slab, bytes: number): PooledBytes {
    const piece = slab.buffer.subarray(slab.used, slab.used + bytes);
    slab.used += bytes;
    slab.pieces++;
    let released = false;
    return {
      bytes: piece,
      release: () => {
        if (released) throw new Error('pooled buffer released twice');
        released = true;
        slab.pieces--;
        if (slab.pieces > 0) return;
        if (slab.retired) this.giveBack(slab.buffer);
        // The current slab, now empty, serves the next pieces from its start.
        else this.drain();
      },
    };
  }

  private giveBack(buffer: Buffer): void {
    this.free.push(buffer);
    this.drain();
  }

  private drain(): void {
    while (this.waiting.length > 0) {
      const lent = this.serve(this.waiting[0].pieceBytes);
      if (!lent) return;
      this.waiting.shift()!.resolve(lent);
    }
  }
}
