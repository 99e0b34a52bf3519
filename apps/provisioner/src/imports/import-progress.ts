export interface ImportProgress {
  files_done: number;
  files_total: number;
  bytes_done: number;
  bytes_total: number;
}

export const NO_PROGRESS: ImportProgress = {
  files_done: 0,
  files_total: 0,
  bytes_done: 0,
  bytes_total: 0,
};

/**
 * Coalesces progress updates: the copy loop reports every chunk, the queue hears about it
 * at most every `intervalMs` (and always at the end), so progress costs no throughput.
 */
export class ProgressReporter {
  private readonly progress: ImportProgress;
  private lastSent = 0;
  private inFlight: Promise<void> | null = null;

  constructor(
    filesTotal: number,
    bytesTotal: number,
    private readonly sink: (progress: ImportProgress) => Promise<void>,
    private readonly intervalMs = 500,
  ) {
    this.progress = {
      files_done: 0,
      files_total: filesTotal,
      bytes_done: 0,
      bytes_total: bytesTotal,
    };
  }

  /** Files kept from an earlier attempt: done before this one copies anything. */
  kept(files: number, bytes: number): void {
    this.progress.files_done += files;
    this.progress.bytes_done += bytes;
  }

  bytes(count: number): void {
    this.progress.bytes_done += count;
    this.maybeSend();
  }

  fileDone(): void {
    this.progress.files_done += 1;
    this.maybeSend();
  }

  async flush(): Promise<void> {
    if (this.inFlight) await this.inFlight;
    await this.sink({ ...this.progress });
  }

  private maybeSend(): void {
    const now = Date.now();
    if (this.inFlight || now - this.lastSent < this.intervalMs) return;
    this.lastSent = now;
    // Progress is advisory: a failed update must not fail the copy.
    this.inFlight = this.sink({ ...this.progress })
      .catch(() => undefined)
      .finally(() => {
        this.inFlight = null;
      });
  }
}
