/**
 * The attempt lost its job's lock: another attempt may own the import now (the lock lapsed while
 * the queue was unreachable longer than IMPORT_LOCK_MS, or the job was handed to a new attempt).
 * It must stop writing to storage and leave the record alone; the owner finishes the import.
 */
export class LeaseLostError extends Error {
  readonly code = 'lease_lost';
  constructor(importId: string, why: string) {
    super(`import ${importId}: this attempt no longer holds the job's lock (${why})`);
    this.name = 'LeaseLostError';
  }
}

/**
 * One attempt's hold on its job's lock, as this process can know it: the lock is renewed by
 * BullMQ (every IMPORT_LOCK_MS / 4) and each renewal confirmed by the queue is a sign of life.
 * With no confirmation for a whole lock duration the lock may have lapsed and the job been
 * given to another attempt, so the attempt counts as lost: on a store without rename (S3) its
 * files land on the dataset's final keys, where only the lock holder may write. Before the
 * commit the hold is checked on the queue itself (`confirm`), which is what decides.
 */
export class AttemptLease {
  private confirmedAt = Date.now();
  private lostBecause: string | null = null;

  constructor(
    readonly importId: string,
    private readonly lockMs: number,
    private readonly renewOnQueue: () => Promise<boolean>,
    private readonly now: () => number = Date.now,
  ) {
    this.confirmedAt = now();
  }

  /** The queue confirmed a renewal of the lock. */
  renewed(): void {
    if (this.lostBecause === null) this.confirmedAt = this.now();
  }

  lose(why: string): void {
    this.lostBecause ??= why;
  }

  /** Throws LeaseLostError once the lock is known, or may be, lost. */
  assertHeld(): void {
    if (this.lostBecause === null && this.now() - this.confirmedAt > this.lockMs)
      this.lostBecause = `no renewal of the lock confirmed for ${this.lockMs} ms`;
    if (this.lostBecause !== null) throw new LeaseLostError(this.importId, this.lostBecause);
  }

  get lost(): boolean {
    try {
      this.assertHeld();
      return false;
    } catch {
      return true;
    }
  }

  /** Renews the lock on the queue and throws LeaseLostError unless this attempt still holds it. */
  async confirm(): Promise<void> {
    this.assertHeld();
    if (!(await this.renewOnQueue())) this.lose("the queue holds another attempt's lock, or none");
    else this.renewed();
    this.assertHeld();
  }
}
