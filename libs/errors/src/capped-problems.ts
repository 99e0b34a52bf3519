import type { FieldProblem } from './app-error';

/**
 * Most problems one answer lists (the rest are counted in `error_count`): a document with a
 * million bad records gets an answer of a few hundred kilobytes, not of a hundred megabytes.
 */
export const MAX_REPORTED_PROBLEMS = 1000;

/**
 * Problems found while checking input whose size the client chooses: the first
 * `MAX_REPORTED_PROBLEMS` are kept, every one is counted, so memory stays bounded however
 * many records are wrong.
 */
export class CappedProblems {
  private readonly kept: FieldProblem[] = [];
  private total = 0;

  add(problem: FieldProblem): void {
    this.total++;
    if (this.kept.length < MAX_REPORTED_PROBLEMS) this.kept.push(problem);
  }

  /** Every problem added, listed or not. */
  get count(): number {
    return this.total;
  }

  get listed(): readonly FieldProblem[] {
    return this.kept;
  }
}
