import { randomBytes } from 'node:crypto';
import { type RangeAnswer, ReadAheadBudget, readInRanges } from './ranged-read';

const KiB = 1024;

/**
 * A store in memory whose ranges answer in the order the test releases them: each GET waits
 * until `release(index)`, then sends its bytes in 4 KiB chunks.
 */
function heldStore(content: Buffer, rangeBytes: number) {
  const gates = new Map<number, () => void>();
  const waiting = new Map<number, Promise<void>>();
  const asked: number[] = [];
  const aborted: number[] = [];
  const gate = (index: number) => {
    if (!waiting.has(index))
      waiting.set(index, new Promise<void>((resolve) => gates.set(index, resolve)));
    return waiting.get(index)!;
  };
  const get = async (start: number, end: number, signal: AbortSignal): Promise<RangeAnswer> => {
    const index = start / rangeBytes;
    asked.push(index);
    signal.addEventListener('abort', () => aborted.push(index));
    await gate(index);
    const bytes = content.subarray(start, end + 1);
    return {
      body: (async function* () {
        for (let at = 0; at < bytes.length; at += 4 * KiB) yield bytes.subarray(at, at + 4 * KiB);
      })(),
      destroy: () => undefined,
    };
  };
  const release = (index: number) => {
    void gate(index);
    gates.get(index)!();
  };
  return { get, release, asked, aborted };
}

async function collect(read: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of read) chunks.push(chunk);
  return Buffer.concat(chunks);
}

describe('readInRanges', () => {
  const settings = { rangeBytes: 64 * KiB, ranges: 4 };

  it('yields the bytes in order whatever order the ranges answer in, within the window', async () => {
    const content = randomBytes(10 * 64 * KiB + 123);
    const store = heldStore(content, settings.rangeBytes);
    const budget = ReadAheadBudget.of(settings);
    const read = collect(readInRanges(content.length, settings, budget, store.get));
    // Ranges answer last first within each window.
    for (const index of [3, 2, 1, 0, 7, 6, 5, 4, 10, 9, 8]) {
      await new Promise((resolve) => setImmediate(resolve));
      store.release(index);
    }
    expect((await read).equals(content)).toBe(true);
    expect(store.asked.sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(budget.queued).toBe(0);
    expect(budget.peakQueued).toBeLessThanOrEqual(
      budget.slots * settings.rangeBytes + 64 * KiB + 4 * KiB,
    );
    // Every slot given back.
    expect(Array.from({ length: budget.slots }, () => budget.take()).every(Boolean)).toBe(true);
    expect(budget.take()).toBe(false);
  });

  it('an object finding no slot free reads one range at a time, and still reads it whole', async () => {
    const content = randomBytes(5 * 64 * KiB);
    const store = heldStore(content, settings.rangeBytes);
    const budget = new ReadAheadBudget(0);
    const read = collect(readInRanges(content.length, settings, budget, store.get));
    for (let index = 0; index < 5; index++) {
      await new Promise((resolve) => setImmediate(resolve));
      // Never more than the range in order asked for.
      expect(store.asked).toEqual(Array.from({ length: index + 1 }, (_, i) => i));
      store.release(index);
    }
    expect((await read).equals(content)).toBe(true);
  });

  it("a range ahead failing ends the read at once, before the one in order is read, and aborts the others' GETs", async () => {
    const content = randomBytes(8 * 64 * KiB);
    const store = heldStore(content, settings.rangeBytes);
    const budget = ReadAheadBudget.of(settings);
    const failing = async (start: number, end: number, signal: AbortSignal) => {
      if (start === 2 * settings.rangeBytes) throw new Error('changed');
      return store.get(start, end, signal);
    };
    await expect(collect(readInRanges(content.length, settings, budget, failing))).rejects.toThrow(
      'changed',
    );
    expect(store.aborted.sort()).toEqual([0, 1, 3]);
    expect(budget.queued).toBe(0);
    expect(Array.from({ length: budget.slots }, () => budget.take()).every(Boolean)).toBe(true);
  });
});
