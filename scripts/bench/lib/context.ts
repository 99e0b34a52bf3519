/** What every suite gets from the runner. */
export interface BenchContext {
  /** Smaller data and shorter runs: a smoke test of the benchmark itself, not a figure. */
  quick: boolean;
  /** `--scale-sizes`: the file counts the scale suite imports instead of its own. */
  scaleSizes?: number[];
  /** `--scale-rounds`: rounds per size of the scale suite instead of its own. */
  scaleRounds?: number;
  /** `--huge-gib`: the size of the imports suite's optional single-file case (off without it). */
  hugeGiB?: number;
  /** `--fdp-datasets`: the size of the fdp suite's catalog instead of its own. */
  fdpDatasets?: number;
  /** A private temporary directory under .bench/, removed at the end. */
  tempDir: string;
  log(message: string): void;
}
