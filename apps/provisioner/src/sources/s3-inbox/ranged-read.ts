/** How a large inbox object is read: in ranges, several GETs in flight (S3_INBOX_RANGE_*). */
export interface RangedReadSettings {
  /** Bytes of one ranged GET. */
  rangeBytes: number;
  /** Ranged GETs of one object in flight at once; 1 reads it as one GET. */
  ranges: number;
}

export const DEFAULT_RANGED_READS: RangedReadSettings = { rangeBytes: 8 * 1024 * 1024, ranges: 4 };

/**
 * Bytes a range being consumed (the one in order) may hold before its GET waits for the reader:
 * the stream's own back-pressure, so a lane whose writer is slow holds this, not a range.
 */
export const IN_ORDER_QUEUE_BYTES = 1024 * 1024;

/**
 * What the ranges read ahead of the bytes being hashed may hold in one worker: a slot is one
 * range (rangeBytes) queued out of order. Taken without waiting, so an object that finds none
 * free reads one range at a time and never waits for another import's; at least one range of
 * every object runs without a slot, which is what keeps each read going.
 */
export class ReadAheadBudget {
  private free: number;
  /** Bytes queued by every ranged read of this worker, now and at most (tests, memory). */
  queued = 0;
  peakQueued = 0;

  constructor(readonly slots: number) {
    this.free = slots;
  }

  /** The budget of a worker: two objects' full windows. */
  static of(settings: RangedReadSettings): ReadAheadBudget {
    return new ReadAheadBudget(2 * Math.max(0, settings.ranges - 1));
  }

  take(): boolean {
    if (this.free === 0) return false;
    this.free--;
    return true;
  }

  give(): void {
    this.free++;
  }

  count(bytes: number): void {
    this.queued += bytes;
    if (this.queued > this.peakQueued) this.peakQueued = this.queued;
  }
}

/** One ranged GET's answer: its bytes, and how to drop them unread. */
export interface RangeAnswer {
  body: AsyncIterable<Uint8Array>;
  destroy(): void;
}

/** A GET of bytes start..end (inclusive), checked to be of the version read; aborted by `signal`. */
export type RangeGet = (start: number, end: number, signal: AbortSignal) => Promise<RangeAnswer>;

/** What the ranges of one read share: the first failure, and the reader's wake-up. */
interface ReadState {
  failure: unknown;
  wake: (() => void) | null;
}

/** One range in flight: its GET's bytes queued in order until the reader takes them. */
class RangePart {
  private readonly chunks: Uint8Array[] = [];
  private first = 0;
  private queued = 0;
  private ended = false;
  private dropped = false;
  private answer: RangeAnswer | null = null;
  private resume: (() => void) | null = null;
  /** The GET's own (one signal a range: an object may have hundreds of them). */
  readonly abort = new AbortController();

  constructor(
    private readonly length: number,
    /** Holds a read-ahead slot: may queue its whole range. */
    private readonly slot: boolean,
    private readonly budget: ReadAheadBudget,
    private readonly state: ReadState,
  ) {}

  /** Starts the GET; its failure is the read's (the reader sees it at its next chunk). */
  start(answer: Promise<RangeAnswer>): void {
    void this.pump(answer).catch((error: unknown) => {
      if (!this.dropped) this.state.failure ??= error;
      this.ended = true;
      this.state.wake?.();
    });
  }

  private async pump(pending: Promise<RangeAnswer>): Promise<void> {
    const answer = await pending;
    this.answer = answer;
    if (this.dropped) return answer.destroy();
    let got = 0;
    for await (const chunk of answer.body) {
      if (this.dropped) return;
      got += chunk.length;
      if (got > this.length) throw new Error(`a range answered more than its ${this.length} bytes`);
      this.chunks.push(chunk);
      this.queued += chunk.length;
      this.budget.count(chunk.length);
      this.state.wake?.();
      while (!this.slot && !this.dropped && this.queued > IN_ORDER_QUEUE_BYTES)
        await new Promise<void>((resolve) => (this.resume = resolve));
    }
    if (got !== this.length)
      throw new Error(`a range ended after ${got} of its ${this.length} bytes`);
    this.ended = true;
    this.state.wake?.();
  }

  /** The next bytes in order; null once the range is read; the read's first failure. */
  async next(): Promise<Uint8Array | null> {
    for (;;) {
      if (this.state.failure !== undefined) throw this.state.failure;
      if (this.first < this.chunks.length) {
        const chunk = this.chunks[this.first];
        this.chunks[this.first++] = undefined as unknown as Uint8Array;
        this.queued -= chunk.length;
        this.budget.count(-chunk.length);
        if (this.resume && this.queued <= IN_ORDER_QUEUE_BYTES) {
          const resume = this.resume;
          this.resume = null;
          resume();
        }
        return chunk;
      }
      if (this.ended) {
        this.release();
        return null;
      }
      await new Promise<void>((resolve) => (this.state.wake = resolve));
      this.state.wake = null;
    }
  }

  /** Stops the GET and gives back what the range held. */
  drop(): void {
    if (this.dropped) return;
    this.dropped = true;
    this.abort.abort();
    this.answer?.destroy();
    this.budget.count(-this.queued);
    this.queued = 0;
    this.chunks.length = 0;
    this.resume?.();
    this.release();
  }

  private released = false;

  private release(): void {
    if (this.released) return;
    this.released = true;
    if (this.slot) this.budget.give();
  }
}

/**
 * An object of `size` bytes read as ranges of `rangeBytes`, up to `ranges` GETs in flight, its
 * bytes yielded in order (what a sequential hash needs). The range being yielded streams with
 * back-pressure; the ones ahead of it queue their bytes, each within a slot of `budget`, so the
 * worker's memory stays within the budget whatever number of lanes read. The first failure of
 * any range ends the read; leaving it early (a failure, a stop) aborts the GETs in flight.
 */
export async function* readInRanges(
  size: number,
  settings: RangedReadSettings,
  budget: ReadAheadBudget,
  get: RangeGet,
): AsyncGenerator<Uint8Array> {
  const count = Math.ceil(size / settings.rangeBytes);
  const state: ReadState = { failure: undefined, wake: null };
  const parts: (RangePart | undefined)[] = [];
  let launched = 0;
  const launch = (slot: boolean) => {
    const start = launched * settings.rangeBytes;
    const end = Math.min(size, start + settings.rangeBytes) - 1;
    const part = new RangePart(end - start + 1, slot, budget, state);
    parts[launched++] = part;
    part.start(get(start, end, part.abort.signal));
  };
  try {
    for (let head = 0; head < count; head++) {
      if (launched === head) launch(false);
      while (launched < count && launched - head < settings.ranges && budget.take()) launch(true);
      const part = parts[head]!;
      for (let chunk = await part.next(); chunk !== null; chunk = await part.next()) yield chunk;
      parts[head] = undefined;
    }
  } finally {
    for (const part of parts) part?.drop();
  }
}
