/** Longest stretch of synchronous work before health probes and other requests get a turn. */
const DEFAULT_SLICE_MS = 20;

/**
 * Runs a synchronous `fn` over items in order, yielding to the event loop every `sliceMs`, and
 * keeps the input order of the results. For work of a size the client chooses (the records of an
 * import document), or of very many tiny calls (file metadata answered from the kernel's caches,
 * several times faster than the same calls through libuv's thread pool), without stalling every
 * other request, `/health/live` included, for long.
 */
export async function mapTimeSliced<T, R>(
  items: readonly T[],
  fn: (item: T, index: number) => R,
  sliceMs = DEFAULT_SLICE_MS,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  const slice = new TimeSlice(sliceMs);
  for (let i = 0; i < items.length; i++) {
    results[i] = fn(items[i], i);
    if (slice.spent) await slice.next();
  }
  return results;
}

/**
 * Sliced work waiting for its turn, across every TimeSlice of the process: one slice runs per
 * turn of the event loop, whatever the number of slicers. Were each to yield on its own, the
 * turn after N of them yielded together would run all N slices back to back (six concurrent
 * DCAT exports: 6 × 20 ms before a health probe's socket is read, again for each step of its
 * answer), and a probe would wait longer the more work runs.
 */
const waiting: (() => void)[] = [];
let turnAsked = false;

/** In the next turn of the event loop (after its I/O), the first slice waiting runs. */
function askTurn(): void {
  if (turnAsked) return;
  turnAsked = true;
  setImmediate(() => {
    turnAsked = false;
    const next = waiting.shift();
    // Asked before it runs: the slice that runs now queues behind the others.
    if (waiting.length > 0) askTurn();
    next?.();
  });
}

/** Resolves in a later turn of the event loop than the current one, behind every slice queued. */
function nextTurn(): Promise<void> {
  return new Promise<void>((resolve) => {
    waiting.push(resolve);
    askTurn();
  });
}

/**
 * The same slicing for a loop that is not a map over an array (a walk of a directory tree):
 * after each synchronous step, `if (slice.spent) await slice.next()`.
 */
export class TimeSlice {
  private start = performance.now();

  constructor(private readonly ms = DEFAULT_SLICE_MS) {}

  get spent(): boolean {
    return performance.now() - this.start >= this.ms;
  }

  /** Lets the event loop run (I/O, timers, and the other slicers' turns), then starts the next slice. */
  async next(): Promise<void> {
    await nextTurn();
    this.start = performance.now();
  }
}

/** mapTimeSliced for its effects only. */
export async function forEachTimeSliced<T>(
  items: readonly T[],
  fn: (item: T, index: number) => void,
): Promise<void> {
  await mapTimeSliced(items, fn);
}
