import { join } from 'node:path';
import { mapLimit } from '../common/map-limit';
import { mapTimeSliced } from '../common/time-sliced';
import type { StagingArea } from '../storage/storage-system';
import type { DatasetImportContext } from './dataset-import.context';
import { copyFileWithHashesSync, copyWithHashes, CopyResult } from './hashing-copy';
import { ImportTransientError } from './import-errors';
import { ProgressReporter } from '../imports/import-progress';
import type { ImportPlan } from './preflight';
import { copyFilesOnThreads } from './copy-thread-pool';

const DEFAULT_COPY_CONCURRENCY = 6;
/** Three per large-file lane: 4 lanes hold 24 MiB, whatever the file sizes. */
const DEFAULT_BUFFER_BYTES = 2 * 1024 * 1024;
const DEFAULT_SMALL_FILE_BYTES = 64 * 1024;
const SHARED_SLICE_MS = 2;

/**
 * Step 2: copies every planned file into the staging area, hashing while copying, and returns
 * each file's size and checksums in plan order. Progress is reported before and after.
 */
export async function stageFiles(
  ctx: DatasetImportContext,
  plan: ImportPlan,
  staging: StagingArea,
): Promise<CopyResult[]> {
  const progress = new ProgressReporter(plan.files.length, plan.bytesTotal, ctx.reportProgress);
  await progress.flush();
  ctx.phases?.lap('preflight');
  const results = await new FileStager(ctx, plan, staging, progress).run();
  await progress.flush();
  ctx.phases?.lap('copy+hash');
  return results;
}

/**
 * One attempt's copy: large files on parallel lanes (reads and writes on libuv's pool, hashing
 * here), small files on the copy threads or, without them, here in time slices, both at once.
 */
class FileStager {
  private readonly results: CopyResult[];
  private readonly md5: boolean;
  private readonly large: number[];
  private readonly small: number[];
  private readonly smallLimit: number;
  private failed = false;

  constructor(
    private readonly ctx: DatasetImportContext,
    private readonly plan: ImportPlan,
    private readonly staging: StagingArea,
    private readonly progress: ProgressReporter,
  ) {
    const files = plan.files;
    this.results = new Array<CopyResult>(files.length);
    this.md5 = plan.algorithms.includes('md5');
    // Largest first, so one big file does not start last and run alone at the end.
    const order = files.map((_, i) => i).sort((a, b) => files[b].size - files[a].size);
    this.smallLimit = ctx.smallFileBytes ?? DEFAULT_SMALL_FILE_BYTES;
    // With copy threads every file goes to them, large ones too: each thread hashes what it
    // copies, so every core hashes (on this thread only one core would hash the large files).
    // A backend without blocking writes copies every file on the async path.
    const onThreads = (ctx.copyPool?.size ?? 0) > 0 && staging.prepareLocalObject !== undefined;
    const blocking = onThreads ? Infinity : staging.createObjectSync ? this.smallLimit : -1;
    this.large = order.filter((i) => files[i].size > blocking);
    this.small = order.filter((i) => files[i].size <= blocking);
  }

  async run(): Promise<CopyResult[]> {
    // Both halves settle before the caller removes the staging area: no write lands after it.
    const outcomes = await Promise.allSettled(
      [this.copyLarge(), this.copySmall()].map((p) =>
        p.catch((error: unknown) => {
          this.failed = true;
          throw error;
        }),
      ),
    );
    for (const outcome of outcomes) if (outcome.status === 'rejected') throw outcome.reason;
    return this.results;
  }

  private readonly done = (index: number, result: CopyResult): void => {
    const file = this.plan.files[index];
    if (result.size !== file.size)
      throw new ImportTransientError(
        'source_changed',
        `${file.path} changed size between preflight and copy`,
      );
    this.results[index] = result;
    this.progress.fileDone();
    this.ctx.copyMeter?.addFiles(1);
  };

  private readonly onBytes = (n: number): void => {
    this.progress.bytes(n);
    this.ctx.copyMeter?.addBytes(n);
  };

  private async copyLarge(): Promise<void> {
    const lanes = Math.min(
      this.large.length,
      Math.max(1, this.ctx.copyConcurrency ?? this.staging.copyLanes ?? DEFAULT_COPY_CONCURRENCY),
    );
    const bufferBytes =
      this.ctx.bufferBytes ?? this.staging.copyBufferBytes ?? DEFAULT_BUFFER_BYTES;
    const buffersOfLanes = Array.from({ length: lanes }, (): [Buffer, Buffer, Buffer] => [
      Buffer.allocUnsafe(bufferBytes),
      Buffer.allocUnsafe(bufferBytes),
      Buffer.allocUnsafe(bufferBytes),
    ]);
    await mapLimit(this.large, lanes, async (index) => {
      if (this.failed) return;
      const buffers = buffersOfLanes.pop()!;
      try {
        const file = this.plan.files[index];
        const writer = await this.staging.createObject(file.path, file.size);
        const result = await copyWithHashes(
          join(this.plan.payloadRoot, file.path),
          file.path,
          writer,
          { md5: this.md5, identity: file, buffers, onBytes: this.onBytes },
        );
        this.done(index, result);
      } finally {
        buffersOfLanes.push(buffers);
      }
    });
  }

  private async copySmall(): Promise<void> {
    if (this.small.length === 0) return;
    const pool = this.ctx.copyPool;
    const prepare = this.staging.prepareLocalObject?.bind(this.staging);
    if (!pool || pool.size === 0 || !prepare) return this.copySmallHere();
    // On the copy threads, batch by batch (every file, see the constructor): they overlap what
    // one thread cannot, the hashing and the ~30 µs of kernel time that creating each file costs.
    const small = this.small;
    await copyFilesOnThreads(pool, {
      stagingId: this.staging.id,
      md5: this.md5,
      sourceRoot: this.plan.payloadRoot,
      files: small.map((index) => this.plan.files[index]),
      prepare,
      copied: (position, result) => this.done(small[position], result),
      bytes: this.onBytes,
      stopped: () => this.failed,
      directWriteMinBytes: this.staging.directWriteMinBytes,
    });
  }

  /**
   * Without threads: one at a time in blocking calls, in time slices, while the large files'
   * reads and writes run on the thread pool: one core hashes, the other moves bytes.
   */
  private async copySmallHere(): Promise<void> {
    const files = this.plan.files;
    const buffer = Buffer.allocUnsafe(
      Math.max(1, Math.min(this.smallLimit, files[this.small[0]].size + 1)),
    );
    // Short slices while large copies run: each of their chunks waits for the slice to end.
    const sliceMs = this.large.length > 0 ? SHARED_SLICE_MS : undefined;
    await mapTimeSliced(
      this.small,
      (index) => {
        if (this.failed) return;
        const file = files[index];
        const writer = this.staging.createObjectSync!(file.path);
        this.done(
          index,
          copyFileWithHashesSync(join(this.plan.payloadRoot, file.path), file.path, writer, {
            md5: this.md5,
            identity: file,
            buffer,
            onBytes: this.onBytes,
          }),
        );
      },
      sliceMs,
    );
  }
}
