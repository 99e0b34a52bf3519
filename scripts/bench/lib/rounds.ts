/**
 * The order of the sides in one interleaved round: rotated, so each side takes each place in
 * turn, and reversed every other round, so a side does not always follow the same one (a
 * rotation alone keeps the neighbours).
 */
export function roundOrder<T>(sides: readonly T[], round: number): T[] {
  const rotated = sides.map((_, i) => sides[(i + round) % sides.length]);
  return round % 2 === 1 ? rotated.reverse() : rotated;
}
