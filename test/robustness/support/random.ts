import { prng } from '../../../scripts/lib/prng';

/** A seeded PRNG (mulberry32): the same attack on every run, so a failure can be replayed. */
export class Random {
  readonly next: () => number;

  constructor(seed: number) {
    this.next = prng(seed);
  }

  int(maxExclusive: number): number {
    return Math.floor(this.next() * maxExclusive);
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)];
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }
}
