import { setImmediate as yieldToEventLoop } from 'node:timers/promises';

/** Longest stretch of synchronous work before health probes and other requests get a turn. */
const SLICE_MS = 20;

/**
 * Calls a synchronous `fn` for each item in order, yielding to the event loop every 20 ms: for
 * checking input of a size the client chooses (the records of an import document) without
 * stalling every other request, `/health/live` included, while it runs.
 */
export async function forEachTimeSliced<T>(
  items: readonly T[],
  fn: (item: T, index: number) => void,
): Promise<void> {
  let sliceStart = performance.now();
  for (let i = 0; i < items.length; i++) {
    fn(items[i], i);
    if (performance.now() - sliceStart >= SLICE_MS) {
      await yieldToEventLoop();
      sliceStart = performance.now();
    }
  }
}
