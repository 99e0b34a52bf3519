/**
 * A process-wide cap on the bytes of upload buffers (S3_UPLOAD_CONCURRENCY × S3_PART_BYTES):
 * every part buffer is taken from it before it is filled and given back once its upload has
 * ended, so four concurrent imports of 2 GiB files hold no more than this between them.
 */
export class ByteBudget {
  private available: number;
  private readonly waiting: { bytes: number; resolve: () => void }[] = [];

  constructor(readonly capacity: number) {
    this.available = capacity;
  }

  async take(bytes: number): Promise<void> {
    const wanted = Math.min(bytes, this.capacity);
    if (this.waiting.length === 0 && this.available >= wanted) {
      this.available -= wanted;
      return;
    }
    await new Promise<void>((resolve) => this.waiting.push({ bytes: wanted, resolve }));
  }

  give(bytes: number): void {
    this.available += Math.min(bytes, this.capacity);
    // First come, first served: a large part is not starved by a stream of small files.
    while (this.waiting.length > 0 && this.available >= this.waiting[0].bytes) {
      const next = this.waiting.shift()!;
      this.available -= next.bytes;
      next.resolve();
    }
  }
}
