import { join } from 'node:path';
import { mapLimit } from '../common/map-limit';
import type { LocalFiles, StagingArea } from '../storage/storage-system';
import type { DatasetImportContext } from './dataset-import-context';
import { copyWithHashes, CopyResult } from './hashing-copy';
import { ImportTransientError } from './import-errors';
import { ProgressReporter } from '../imports/import-progress';
import type { ImportPlan } from './preflight';
import { copyFilesOnThreads, type CopyThreadPool } from './copy-thread-pool';

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
 * One attempt's copy, one of two ways: on the copy threads (every file, where the backend's
 * objects are files on this host and IMPORT_COPY_THREADS > 0), or else on parallel lanes here
 * (reads and writes on libuv's pool, hashing on this thread), as S3 always is.
 */
class FileStager {
  private readonly results: CopyResult[];
  private readonly md5: boolean;
  /** Plan indexes, largest file first, so one big file does not start last and run alone. */
  private readonly order: number[];
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
    this.order = files.map((_, i) => i).sort((a, b) => files[b].size - files[a].size);
  }

  async run(): Promise<CopyResult[]> {
    const pool = this.ctx.copyPool;
    const local = this.staging.localFiles;
    if (pool && pool.size > 0 && local) await this.copyOnThreads(pool, local);
    else await this.copyOnLanes();
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

  /**
   * Every file on the copy threads, batch by batch: every core hashes, and they overlap what one
   * thread cannot, the ~30 µs of kernel time that creating each file costs.
   */
  private async copyOnThreads(pool: CopyThreadPool, local: LocalFiles): Promise<void> {
    const order = this.order;
    await copyFilesOnThreads(pool, {
      stagingId: this.staging.id,
      md5: this.md5,
      sourceRoot: this.plan.payloadRoot,
      files: order.map((index) => this.plan.files[index]),
      prepare: (path) => local.prepare(path),
      copied: (position, result) => this.done(order[position], result),
      bytes: this.onBytes,
      stopped: () => this.failed,
      directWriteMinBytes: local.directWriteMinBytes,
    });
  }

  /**
   * Without copy threads (IMPORT_COPY_THREADS=0, or a backend without local files): the
   * backend's number of lanes, each with three buffers (read, hash, write overlap). The first
   * failure stops new files, and every lane finishes its file before this returns, so no write
   * lands after the caller removes the staging area.
   */
  private async copyOnLanes(): Promise<void> {
    const lanes = Math.max(1, this.ctx.copyConcurrency ?? this.staging.copyLanes);
    const bufferBytes = this.ctx.bufferBytes ?? this.staging.copyBufferBytes;
    const buffersOfLanes = Array.from(
      { length: Math.min(lanes, this.order.length) },
      (): [Buffer, Buffer, Buffer] => [
        Buffer.allocUnsafe(bufferBytes),
        Buffer.allocUnsafe(bufferBytes),
        Buffer.allocUnsafe(bufferBytes),
      ],
    );
    let firstError: { error: unknown } | undefined;
    await mapLimit(this.order, lanes, async (index) => {
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
      } catch (error) {
        this.failed = true;
        firstError ??= { error };
      } finally {
        buffersOfLanes.push(buffers);
      }
    });
    if (firstError) throw firstError.error;
  }
}
