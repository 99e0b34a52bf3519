import { setImmediate as yieldToEventLoop } from 'node:timers/promises';

/** Longest stretch of synchronous work before other requests and timers get a turn. */
export const DEFAULT_SLICE_MS = 20;

/**
 * Runs a synchronous fn over items, yielding to the event loop every `sliceMs`, and keeps the
 * input order. For work made of very many tiny synchronous calls (file metadata answered from
 * the kernel's caches), which is several times faster than the same calls through libuv's
 * thread pool, without blocking health probes or other requests for long.
 */
export async function mapTimeSliced<T, R>(
  items: readonly T[],
  fn: (item: T, index: number) => R,
  sliceMs = DEFAULT_SLICE_MS,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let sliceStart = performance.now();
  for (let i = 0; i < items.length; i++) {
    results[i] = fn(items[i], i);
    if (performance.now() - sliceStart >= sliceMs) {
      await yieldToEventLoop();
      sliceStart = performance.now();
    }
  }
  return results;
}
