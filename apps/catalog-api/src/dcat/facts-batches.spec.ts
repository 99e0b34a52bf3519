import { BATCH, FIRST_BATCH, factsBatches, LAST_BATCH } from './facts-batches';

describe('factsBatches', () => {
  const ids = (n: number) => Array.from({ length: n }, (_, i) => i + 1);
  const sizes = (n: number) => factsBatches(ids(n)).map((b) => b.length);

  it('reads a small first batch, then larger ones, then a small last one, every id once in order', () => {
    const batches = factsBatches(ids(1000));
    expect(batches.map((b) => b.length)).toEqual([
      FIRST_BATCH,
      BATCH,
      BATCH,
      1000 - FIRST_BATCH - 2 * BATCH - LAST_BATCH,
      LAST_BATCH,
    ]);
    expect(batches.flat()).toEqual(ids(1000));
  });

  it('never makes the last batch larger than LAST_BATCH after the first', () => {
    for (const n of [FIRST_BATCH + 1, 150, 450, 999, 1001, 5000]) {
      const batches = sizes(n);
      expect(batches[0]).toBe(FIRST_BATCH);
      expect(batches[batches.length - 1]).toBeLessThanOrEqual(LAST_BATCH);
      expect(Math.max(...batches)).toBeLessThanOrEqual(BATCH);
      expect(batches.reduce((a, b) => a + b, 0)).toBe(n);
    }
  });

  it('cuts the last batch short, and gives no batch for no ids', () => {
    expect(sizes(FIRST_BATCH + 1)).toEqual([FIRST_BATCH, 1]);
    expect(factsBatches(ids(40))).toEqual([ids(40)]);
    expect(factsBatches([])).toEqual([]);
  });
});
