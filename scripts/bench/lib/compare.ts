import { prng } from '../../lib/prng';
import { percentile } from './report';

/** A copy of `items` in a random order (Fisher–Yates, drawn from `random`). */
export function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

/**
 * One timed call. `block` is the slice of time it ran in (a run of consecutive calls, or a
 * round): the bootstrap resamples whole blocks, because the machine's noise is correlated in time
 * and resampling single calls would understate it.
 */
export interface Sample {
  ms: number;
  block: number;
}

export interface Comparison {
  /** p99 of each side, ms. */
  p99: number;
  baseP99: number;
  p50: number;
  baseP50: number;
  /** p99 / base p99 − 1. */
  cost: number;
  /** The cost's 95 % confidence interval (block bootstrap, percentile method). */
  low: number;
  high: number;
}

export const RESAMPLES = 2000;

/**
 * `side` against `base` at the p99, with a 95 % confidence interval: the blocks (of both sides
 * together, so calls interleaved in one block stay paired) are drawn with replacement
 * RESAMPLES times, and the cost recomputed on each draw.
 */
export function compareP99(side: Sample[], base: Sample[], seed: number): Comparison {
  const byBlock = new Map<number, { side: number[]; base: number[] }>();
  const at = (block: number) => {
    let entry = byBlock.get(block);
    if (!entry) byBlock.set(block, (entry = { side: [], base: [] }));
    return entry;
  };
  for (const s of side) at(s.block).side.push(s.ms);
  for (const s of base) at(s.block).base.push(s.ms);
  const blocks = [...byBlock.values()];
  // Seeded: the resamples are the same run after run, so two runs differ by the machine only.
  const random = prng(seed);
  const costs: number[] = [];
  for (let r = 0; r < RESAMPLES; r++) {
    const a: number[] = [];
    const b: number[] = [];
    for (let i = 0; i < blocks.length; i++) {
      const drawn = blocks[Math.floor(random() * blocks.length)];
      a.push(...drawn.side);
      b.push(...drawn.base);
    }
    if (a.length > 0 && b.length > 0) costs.push(percentile(a, 99) / percentile(b, 99) - 1);
  }
  const sideMs = side.map((s) => s.ms);
  const baseMs = base.map((s) => s.ms);
  return {
    p99: percentile(sideMs, 99),
    baseP99: percentile(baseMs, 99),
    p50: percentile(sideMs, 50),
    baseP50: percentile(baseMs, 50),
    cost: percentile(sideMs, 99) / percentile(baseMs, 99) - 1,
    low: percentile(costs, 2.5),
    high: percentile(costs, 97.5),
  };
}

/**
 * What the comparison can tell at all: `base` split in two interleaved halves (`half` says which
 * call goes where, as the sides themselves were interleaved), compared as if they were two sides.
 * A true cost of zero looks like this.
 */
export function noiseFloor(
  base: Sample[],
  half: (s: Sample, index: number) => 0 | 1,
  seed: number,
) {
  const halves: [Sample[], Sample[]] = [[], []];
  base.forEach((s, i) => halves[half(s, i)].push(s));
  return compareP99(halves[0], halves[1], seed);
}

/**
 * The verdict on "costs at most `target`": met when the whole interval is within it, missed
 * when the whole interval is beyond it, otherwise not decided by this run.
 */
export function ciVerdict(c: Comparison, target: number): 'met' | 'missed' | 'undecided' {
  if (c.high <= target) return 'met';
  if (c.low > target) return 'missed';
  return 'undecided';
}
