import { Crypt4ghError } from './format';

/** Bytes as they come: a Node Readable, an async generator, or an array of buffers. */
export type ByteSource = AsyncIterable<Uint8Array> | Iterable<Uint8Array>;

async function* fromSync(source: Iterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  yield* source;
}

/**
 * Reads a byte stream (a Node Readable, or any async iterable of chunks) in pieces of the sizes the
 * format dictates, whatever sizes the chunks come in. It holds at most one piece plus one chunk.
 */
export class ByteReader {
  private readonly chunks: Buffer[] = [];
  private buffered = 0;
  private ended = false;
  private readonly iterator: AsyncIterator<Uint8Array>;
  /** Bytes handed out so far. */
  position = 0;

  constructor(source: ByteSource) {
    this.iterator =
      Symbol.asyncIterator in source ? source[Symbol.asyncIterator]() : fromSync(source);
  }

  private async fill(wanted: number): Promise<void> {
    while (this.buffered < wanted && !this.ended) {
      const next = await this.iterator.next();
      if (next.done) {
        this.ended = true;
      } else if (next.value.length > 0) {
        const chunk = Buffer.isBuffer(next.value)
          ? next.value
          : Buffer.from(next.value.buffer, next.value.byteOffset, next.value.length);
        this.chunks.push(chunk);
        this.buffered += chunk.length;
      }
    }
  }

  private take(length: number): Buffer {
    const first = this.chunks[0];
    let piece: Buffer;
    if (first.length >= length) {
      // The common case (chunks at least a piece long): no copy.
      piece = first.subarray(0, length);
      if (first.length === length) this.chunks.shift();
      else this.chunks[0] = first.subarray(length);
    } else {
      piece = Buffer.allocUnsafe(length);
      let filled = 0;
      while (filled < length) {
        const chunk = this.chunks[0];
        const used = Math.min(chunk.length, length - filled);
        chunk.copy(piece, filled, 0, used);
        filled += used;
        if (used === chunk.length) this.chunks.shift();
        else this.chunks[0] = chunk.subarray(used);
      }
    }
    this.buffered -= length;
    this.position += length;
    return piece;
  }

  /** Up to `length` bytes: fewer only at the end of the stream, undefined when nothing is left. */
  async read(length: number): Promise<Buffer | undefined> {
    await this.fill(length);
    if (this.buffered === 0) return undefined;
    return this.take(Math.min(length, this.buffered));
  }

  /** Exactly `length` bytes; a stream that ends sooner is refused, naming `what` was cut short. */
  async readExactly(length: number, what: string): Promise<Buffer> {
    await this.fill(length);
    if (this.buffered < length) {
      throw new Crypt4ghError(
        'truncated',
        `The Crypt4GH stream ends inside ${what}: ${length} bytes were due at byte ${this.position}, ${this.buffered} are there`,
      );
    }
    return this.take(length);
  }

  /** Whether nothing is left to read. */
  async atEnd(): Promise<boolean> {
    await this.fill(1);
    return this.buffered === 0;
  }

  /** Everything not read yet, as it comes. */
  async *rest(): AsyncGenerator<Buffer> {
    while (this.chunks.length > 0) {
      const chunk = this.chunks.shift() as Buffer;
      this.buffered -= chunk.length;
      this.position += chunk.length;
      yield chunk;
    }
    while (!this.ended) {
      const next = await this.iterator.next();
      if (next.done) break;
      const chunk = Buffer.from(next.value.buffer, next.value.byteOffset, next.value.length);
      this.position += chunk.length;
      yield chunk;
    }
    this.ended = true;
  }
}
