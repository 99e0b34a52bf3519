import { chmod, lstat, mkdtemp, readdir, rm, statfs } from 'node:fs/promises';
import { join } from 'node:path';
import { processIsAlive } from '@app/platform';
import { ImportRejectedError, ImportStoppedError, ImportTransientError } from '../import-errors';

/** Every directory of a validation is named so, with the worker's pid: `<prefix><pid>-XXXXXX`. */
const PREFIX = 'provisioner-validator-';
const OWNED = /^provisioner-validator-(\d+)-/;

/**
 * The worker's private local directory for validations (VALIDATOR_WORK_DIR): each validation's
 * input, output and scratch directories, and, where the storage's staged files are not plain
 * files on this host (S3 storage, archive mode), the dataset's verified bytes copied for the
 * validator (materialise-data.ts). Bounded: the copies of the worker's running validations
 * together hold at most `maxBytes` (VALIDATOR_WORK_MAX_BYTES); a dataset larger than the bound
 * is refused before anything is copied, one that fits beside the others waits for them.
 * Directories a killed worker left (its pid no longer running, or this process's own pid
 * before it made any) are removed before the first validation (docs/decisions/validators-before-publication.md).
 */
export class ValidatorWorkArea {
  private reserved = 0;
  private readonly waiting: Array<() => void> = [];
  private swept: Promise<void> | undefined;

  constructor(
    readonly dir: string,
    readonly maxBytes: number,
  ) {}

  /**
   * A fresh directory (mode 0700) for one validation that holds `bytes` of copied data, once
   * they fit: `release` removes it (whatever modes its validator or the copy left) and frees
   * its bytes.
   */
  async open(
    bytes: number,
    signal?: AbortSignal,
  ): Promise<{ path: string; release(): Promise<void> }> {
    if (bytes > this.maxBytes)
      throw new ImportRejectedError(
        'validation_too_large',
        `the dataset's ${bytes} bytes are more than the validators' work directory takes (VALIDATOR_WORK_MAX_BYTES=${this.maxBytes})`,
      );
    await this.sweepOnce();
    await this.reserve(bytes, signal);
    let path: string;
    try {
      if (bytes > 0) await this.checkFree(bytes);
      path = await mkdtemp(join(this.dir, `${PREFIX}${process.pid}-`));
    } catch (error) {
      this.free(bytes);
      throw error;
    }
    let released = false;
    return {
      path,
      release: async () => {
        if (released) return;
        released = true;
        try {
          await removeTree(path);
        } finally {
          this.free(bytes);
        }
      },
    };
  }

  /** Removes what killed workers left (once per process; the first validation waits for it). */
  sweepOnce(): Promise<void> {
    return (this.swept ??= this.sweep());
  }

  /** The bytes held by the validations running now. */
  get reservedBytes(): number {
    return this.reserved;
  }

  private async reserve(bytes: number, signal?: AbortSignal): Promise<void> {
    while (this.reserved + bytes > this.maxBytes) {
      if (signal?.aborted) throw new ImportStoppedError();
      await new Promise<void>((wake) => {
        const onAbort = (): void => wake();
        signal?.addEventListener('abort', onAbort, { once: true });
        this.waiting.push(() => {
          signal?.removeEventListener('abort', onAbort);
          wake();
        });
      });
    }
    if (signal?.aborted) throw new ImportStoppedError();
    this.reserved += bytes;
  }

  private free(bytes: number): void {
    this.reserved -= bytes;
    for (const wake of this.waiting.splice(0)) wake();
  }

  private async checkFree(bytes: number): Promise<void> {
    const stats = await statfs(this.dir);
    const free = stats.bavail * stats.bsize;
    if (free < bytes)
      throw new ImportTransientError(
        'validation_work_full',
        `the validators' work directory has ${free} bytes free, the dataset takes ${bytes}`,
      );
  }

  /** Removes what killed workers left: plain text of a dataset must not outlive its validation. */
  private async sweep(): Promise<void> {
    const names = await readdir(this.dir).catch(() => [] as string[]);
    for (const name of names) {
      const owner = OWNED.exec(name);
      if (owner === null) continue;
      const pid = Number(owner[1]);
      if (pid !== process.pid && processIsAlive(pid)) continue;
      await removeTree(join(this.dir, name));
    }
  }
}

/** Removes a tree whose directories may be read-only (0555): each is made writable first. */
export async function removeTree(path: string): Promise<void> {
  const stats = await lstat(path).catch(() => null);
  if (stats === null) return;
  if (stats.isDirectory()) {
    await chmod(path, 0o700).catch(() => undefined);
    for (const entry of await readdir(path, { withFileTypes: true }))
      if (entry.isDirectory()) await removeTree(join(path, entry.name));
  }
  await rm(path, { recursive: true, force: true });
}
