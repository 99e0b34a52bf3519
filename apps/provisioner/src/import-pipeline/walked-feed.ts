import type { ImportPlan } from './preflight';

/** What staging needs before preflight ends: the manifests' files and where to read them. */
export type PlanListing = Pick<
  ImportPlan,
  'files' | 'algorithms' | 'payloadRoot' | 'recentChangeMs'
>;

/**
 * Hands the files preflight's walk has vetted to the staging step while the walk and the checks
 * go on (docs/decisions/stage-while-checking.md). Preflight opens the feed once the manifests
 * are read without a problem, pushes each manifest file as the walk finds it a regular file
 * (its size and inode set in the plan), and ends it when the walk is over; when preflight
 * fails (a refusal, a source changed, a stop) it halts the feed and waits until the staging step
 * has finished the files in flight (idle) before it closes the payload directory they are read
 * through. The staging step takes what was pushed, chunk by chunk, until the end, and calls
 * finish when it is done. A feed never opened (the manifests refused, or preflight failed
 * first) stages nothing.
 */
export class WalkedFeed {
  private listingOf: PlanListing | null = null;
  private pending: number[] = [];
  private ended = false;
  private wake: (() => void) | null = null;
  private failed = false;
  private finished = false;
  private idleWaiters: (() => void)[] = [];
  /** Files pushed so far (plan indexes), and their bytes. */
  pushedFiles = 0;
  pushedBytes = 0;
  /** Bytes the feed hands over at most: what storage had free (less the margin) when it opened. */
  private budgetBytes = Infinity;
  /** A file did not fit the budget: it and every later one are left to the next attempt. */
  overBudget = false;

  get listing(): PlanListing | null {
    return this.listingOf;
  }

  /**
   * `budgetBytes`: free space is checked once the walk is over; until then the copy stages no
   * more than storage had free when the walk started.
   */
  open(listing: PlanListing, budgetBytes: number): void {
    if (this.ended) return;
    this.listingOf = listing;
    this.budgetBytes = budgetBytes;
    this.wakeUp();
  }

  push(index: number): void {
    if (this.ended || !this.listingOf || this.overBudget) return;
    const size = this.listingOf.files.size[index];
    if (this.pushedBytes + size > this.budgetBytes) {
      this.overBudget = true;
      return;
    }
    this.pending.push(index);
    this.pushedFiles += 1;
    this.pushedBytes += size;
    this.wakeUp();
  }

  end(): void {
    this.ended = true;
    this.wakeUp();
  }

  /** Preflight failed: nothing new is staged, and the feed ends. */
  halt(): void {
    this.failed = true;
    this.end();
  }

  get halted(): boolean {
    return this.failed;
  }

  /** The staging step is done with the feed (every file it started has ended). */
  finish(): void {
    this.finished = true;
    for (const resolve of this.idleWaiters.splice(0)) resolve();
  }

  /** Resolves once the staging step has finished. */
  idle(): Promise<void> {
    if (this.finished) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Resolves with the listing once opened, null when the feed ended without one. */
  async opened(): Promise<PlanListing | null> {
    while (!this.listingOf && !this.ended) await this.sleep();
    return this.listingOf;
  }

  /**
   * Everything pushed since the last call (waiting for the next push when there is nothing),
   * null once the feed has ended and all was taken.
   */
  async take(): Promise<number[] | null> {
    while (this.pending.length === 0 && !this.ended) await this.sleep();
    if (this.pending.length === 0) return null;
    const chunk = this.pending;
    this.pending = [];
    return chunk;
  }

  private sleep(): Promise<void> {
    return new Promise((resolve) => (this.wake = resolve));
  }

  private wakeUp(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }
}
