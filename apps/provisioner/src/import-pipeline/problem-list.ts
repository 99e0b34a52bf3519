import { MAX_KEPT_PROBLEMS } from '../sources/source-system';
import type { ImportProblem } from './import-errors';

/**
 * Problems as a rejection reports them: the first MAX_KEPT_PROBLEMS (1,000) kept, every one
 * counted. A depositor decides how many there are (150,000 links, 200,000 wrong digests), so
 * nothing holds more than the kept ones, and none is ever spread into a call's arguments.
 */
export class ProblemList {
  private readonly kept: ImportProblem[] = [];
  private count = 0;

  constructor(private readonly max = MAX_KEPT_PROBLEMS) {}

  /** Every problem added, kept or not. */
  get total(): number {
    return this.count;
  }

  static of(...problems: ImportProblem[]): ProblemList {
    const list = new ProblemList();
    for (const problem of problems) list.add(problem);
    return list;
  }

  add(problem: ImportProblem): void {
    this.count += 1;
    if (this.kept.length < this.max) this.kept.push(problem);
  }

  /** Adds problems found elsewhere: the ones kept there, and `total` of them in all. */
  addAll(problems: readonly ImportProblem[], total = problems.length): void {
    for (const problem of problems) this.add(problem);
    this.count += total - problems.length;
  }

  /** Adds another list's problems: its kept ones, and its total. */
  addList(other: ProblemList): void {
    this.addAll(other.kept, other.count);
  }

  /** The kept problems and, when some were left out, a `more_problems` entry counting them. */
  details(): ImportProblem[] {
    return withCount(this.kept, this.count);
  }
}

/** `kept` and, when `total` is more, the entry that says how many more there were. */
export function withCount(kept: readonly ImportProblem[], total: number): ImportProblem[] {
  const details = kept.slice();
  if (total > kept.length)
    details.push({
      code: 'more_problems',
      message: `${total - kept.length} more problem(s) not listed`,
    });
  return details;
}
