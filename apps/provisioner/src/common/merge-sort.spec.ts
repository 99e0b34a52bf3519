import { mergeSort } from './merge-sort';

describe('mergeSort', () => {
  it('sorts stably, in place, at every length', () => {
    for (const length of [0, 1, 2, 3, 7, 64, 1000]) {
      const keys = Array.from({ length }, (_, i) => (i * 7919) % 13);
      const items = Uint32Array.from({ length }, (_, i) => i);
      const sorted = mergeSort(items, (a, b) => keys[a] - keys[b]);
      expect(sorted).toBe(items);
      const expected = [...Array(length).keys()].sort((a, b) => keys[a] - keys[b]);
      expect([...items]).toEqual(expected);
    }
  });
});
