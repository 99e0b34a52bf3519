/** Bytes lent by the pool: `bytes` is the caller's until it calls release(), once. */
export interface PooledBytes {
  readonly bytes: Buffer;
  release(): void;
}

/**
 * A part buffer that small objects are carved from, given back once every piece is. Pieces are
 * cut one after another and, at the end, again from the start (a ring): the next piece may enter
 * a segment (a piece limit's worth of the buffer) only when no piece of an earlier lap is out in
 * it. So a stream of small objects keeps using one buffer, instead of starting another whenever
 * the slab is full while its last pieces are still uploading (the two then both stay resident).
 */
interface Slab {
  buffer: Buffer;
  /** Where the next piece is cut, unless it wraps to the start. */
  used: number;
  pieces: number;
  /** Pieces out in each segment (a piece in two segments counts in both). */
  segmentPieces: Uint32Array;
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
 * so thousands of them in flight hold a few parts' worth of memory, not a part each, and a stream
 * of them cycles through one slab (see Slab). Requests are
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
    let start = slab ? this.pieceStart(slab, pieceBytes) : -1;
    if (!slab || start < 0) {
      const buffer = this.takeBuffer();
      if (!buffer) return null;
      if (slab) slab.retired = true;
      const segments = Math.ceil(buffer.length / this.pieceLimit);
      slab = this.slab = {
        buffer,
        used: 0,
        pieces: 0,
        segmentPieces: new Uint32Array(segments),
        retired: false,
      };
      start = 0;
    }
    return this.lendPiece(slab, start, pieceBytes);
  }

  /**
   * Where a piece of `bytes` goes in the slab's ring: at `used`, or at the start when it does not
   * fit before the end; -1 when a segment it would enter still has a piece of an earlier lap out.
   * The segment holding `used - 1` was entered on this lap, so its pieces are all before `used`.
   */
  private pieceStart(slab: Slab, bytes: number): number {
    const segment = this.pieceLimit;
    const start = slab.used + bytes <= slab.buffer.length ? slab.used : 0;
    const entered = start === 0 ? -1 : Math.floor((start - 1) / segment);
    const last = Math.floor((start + bytes - 1) / segment);
    for (let s = entered + 1; s <= last; s++) if (slab.segmentPieces[s] > 0) return -1;
    return start;
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

  private lendPiece(slab: Slab, start: number, bytes: number): PooledBytes {
    const piece = slab.buffer.subarray(start, start + bytes);
    slab.used = start + bytes;
    slab.pieces++;
    const first = Math.floor(start / this.pieceLimit);
    const last = Math.floor((start + bytes - 1) / this.pieceLimit);
    for (let s = first; s <= last; s++) slab.segmentPieces[s]++;
    let released = false;
    return {
      bytes: piece,
      release: () => {
        if (released) throw new Error('pooled buffer released twice');
        released = true;
        for (let s = first; s <= last; s++) slab.segmentPieces[s]--;
        slab.pieces--;
        if (slab.retired) {
          if (slab.pieces === 0) this.giveBack(slab.buffer);
          return;
        }
        // The current slab: a segment freed (or the whole slab, which then serves the next
        // pieces from its start) may make room for what waits.
        if (this.waiting.length > 0) this.drain();
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
