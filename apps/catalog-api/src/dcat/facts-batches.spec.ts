import { BATCH, FIRST_BATCH, factsBatches } from './facts-batches';

describe('factsBatches', () => {
  const ids = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

  it('reads a small first batch, then larger ones, every id once in order', () => {
    const batches = factsBatches(ids(1000));
    expect(batches.map((b) => b.length)).toEqual([FIRST_BATCH, BATCH, BATCH, BATCH]);
    expect(batches.flat()).toEqual(ids(1000));
  });

  it('cuts the last batch short, and gives no batch for no ids', () => {
    expect(factsBatches(ids(FIRST_BATCH + 1)).map((b) => b.length)).toEqual([FIRST_BATCH, 1]);
    expect(factsBatches(ids(40))).toEqual([ids(40)]);
    expect(factsBatches([])).toEqual([]);
  });
});
