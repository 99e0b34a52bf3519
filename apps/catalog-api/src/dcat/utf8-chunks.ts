/** Bytes of each buffer an answer's text is encoded into. */
const CHUNK_BYTES = 128 * 1024;

/**
 * Encodes an answer's text, piece by piece, into large UTF-8 buffers that go to the socket as
 * they are: a string handed to the response is measured (Buffer.byteLength, which flattens it)
 * and then encoded again on every write, and a large one outlives the young generation. Here
 * each piece is encoded once, straight into the buffer, and let go.
 */
export class Utf8Chunks {
  private chunk: Buffer | null = null;
  /** Where the bytes not yet taken start, and where the next piece goes. */
  private start = 0;
  private used = 0;

  constructor(private readonly chunkBytes = CHUNK_BYTES) {}

  /** Appends `text`; returns the bytes it made complete (to send), if any. */
  write(text: string): Buffer | undefined {
    if (text.length === 0) return undefined;
    const room = this.chunk === null ? 0 : this.chunk.length - this.used;
    // At most three bytes per UTF-16 unit: only a piece that may not fit is measured.
    if (3 * text.length <= room) {
      this.used += this.chunk!.write(text, this.used);
      return undefined;
    }
    const bytes = Buffer.byteLength(text);
    if (bytes <= room) {
      this.used += this.chunk!.write(text, this.used);
      return undefined;
    }
    const full = this.take();
    this.chunk = Buffer.allocUnsafe(Math.max(this.chunkBytes, bytes));
    this.start = 0;
    this.used = this.chunk.write(text, 0);
    return full;
  }

  /**
   * The bytes written since the last take (undefined when none). The buffer's rest is written
   * after them: a taken view is never written again.
   */
  take(): Buffer | undefined {
    if (this.chunk === null || this.used === this.start) return undefined;
    const bytes = this.chunk.subarray(this.start, this.used);
    this.start = this.used;
    return bytes;
  }
}
