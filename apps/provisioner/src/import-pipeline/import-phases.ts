/** The stages of a dataset import, in the order they run, as the worker reports their times. */
export const IMPORT_PHASES = ['preflight', 'copy+hash', 'verify', 'flush', 'publish'] as const;
export type ImportPhase = (typeof IMPORT_PHASES)[number];

/**
 * Wall-clock time per phase of one import attempt: each lap charges the time since the last
 * one to a phase. The worker logs it when the import is done (the benchmark reads that line).
 */
export class PhaseClock {
  private last = performance.now();
  private readonly ms = new Map<ImportPhase, number>();

  lap(phase: ImportPhase): void {
    const now = performance.now();
    this.ms.set(phase, (this.ms.get(phase) ?? 0) + (now - this.last));
    this.last = now;
  }

  /** "preflight=12 copy+hash=3400 verify=1 flush=230 publish=4" (ms, phases that ran). */
  toString(): string {
    return IMPORT_PHASES.filter((p) => this.ms.has(p))
      .map((p) => `${p}=${Math.round(this.ms.get(p)!)}`)
      .join(' ');
  }
}
