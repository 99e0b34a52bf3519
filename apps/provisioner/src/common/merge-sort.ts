/**
 * Sorts `items` by `compare`, stably, with one scratch array of their size: a typed array's own
 * sort with a comparator copies a million items into arrays of 8-byte slots first.
 */
export function mergeSort(
  items: Uint32Array,
  compare: (a: number, b: number) => number,
): Uint32Array {
  let from: Uint32Array = items;
  let to: Uint32Array = new Uint32Array(items.length);
  for (let width = 1; width < items.length; width *= 2) {
    for (let left = 0; left < items.length; left += 2 * width) {
      const middle = Math.min(left + width, items.length);
      const end = Math.min(left + 2 * width, items.length);
      let i = left;
      let j = middle;
      let k = left;
      while (i < middle && j < end) to[k++] = compare(from[j], from[i]) < 0 ? from[j++] : from[i++];
      while (i < middle) to[k++] = from[i++];
      while (j < end) to[k++] = from[j++];
    }
    [from, to] = [to, from];
  }
  if (from !== items) items.set(from);
  return items;
}
