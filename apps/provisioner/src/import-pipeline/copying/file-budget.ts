/**
 * The files a worker's running imports may hold in memory at once (IMPORT_MAX_FILES). An
 * import holds every file of its dataset from preflight to publish (PlannedFiles: about 100
 * bytes and the file's name each), so memory follows files, and IMPORT_CONCURRENCY
 * large datasets at once would add up past the pod's limit. An import is admitted with its
 * file count before its manifests are parsed; one that does not fit beside those running waits
 * for them (first come, first served: small imports never pass a large one waiting), and one
 * larger than the whole budget is refused (it could never run).
 */
export class FileBudget {
  private held = 0;
  private readonly waiting: { files: number; admit: () => void }[] = [];

  constructor(readonly capacity: number) {}

  /** Files admitted now, for the metrics and tests. */
  get inUse(): number {
    return this.held;
  }

  /**
   * Resolves once `files` fit (at most `capacity`: check first), with the function that gives
   * them back; call it exactly once.
   */
  async acquire(files: number): Promise<() => void> {
    if (files > this.capacity)
      throw new Error(`${files} files cannot fit a budget of ${this.capacity}`);
    if (this.waiting.length > 0 || this.held + files > this.capacity)
      await new Promise<void>((admit) => this.waiting.push({ files, admit }));
    else this.held += files;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.held -= files;
      this.admitWaiting();
    };
  }

  private admitWaiting(): void {
    while (this.waiting.length > 0 && this.held + this.waiting[0].files <= this.capacity) {
      const next = this.waiting.shift()!;
      this.held += next.files;
      next.admit();
    }
  }
}
