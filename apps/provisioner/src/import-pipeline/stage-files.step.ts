import { join } from 'node:path';
import { mapLimit } from '../common/map-limit';
import type { LocalFiles, StagedFile, StagingArea } from '../storage/storage-system';
import type { DatasetImportContext } from './dataset-import-context';
import { copyWithHashes, CopyResult } from './hashing-copy';
import { ImportStoppedError, ImportTransientError } from './import-errors';
import { ProgressReporter } from '../imports/import-progress';
import type { ImportPlan } from './preflight';
import { copyFilesOnThreads, type CopyThreadPool } from './copy-thread-pool';
import { keptFiles, resultOfKept, StagedFilesRecorder } from './kept-files';

/** What the staging step hands on: every file's copy result in plan order, and what was kept. */
export interface StagedResults {
  results: CopyResult[];
  /**
   * Files an earlier attempt had staged that this one kept, and the bytes not written again:
   * theirs, and those of parts of other files the store already held (S3 uploads resumed).
   */
  kept: { files: number; bytes: number };
}

/**
 * Step 2: keeps what earlier attempts staged and is still what the source holds (kept-files.ts),
 * removes the rest of what they left, and copies every other planned file into the staging area,
 * hashing while copying; returns each file's size and checksums in plan order. What is copied is
 * recorded in the area as it goes, so a later attempt keeps it too. Progress is reported before
 * and after. When ctx.signal aborts (the worker is stopping), the copy stops after the chunk in
 * flight and ImportStoppedError is thrown once what was copied is recorded.
 */
export async function stageFiles(
  ctx: DatasetImportContext,
  plan: ImportPlan,
  staging: StagingArea,
): Promise<StagedResults> {
  const kept = keptFiles(plan.files, staging.inherited);
  await staging.discardExcept(new Set([...kept.values()].map((file) => file.path)));
  const keptBytes = [...kept.values()].reduce((sum, file) => sum + file.size, 0);
  const progress = new ProgressReporter(plan.files.length, plan.bytesTotal, ctx.reportProgress);
  progress.kept(kept.size, keptBytes);
  await progress.flush();
  ctx.phases?.lap('preflight');
  const stager = new FileStager(ctx, plan, staging, progress, kept);
  const results = await stager.run();
  await progress.flush();
  ctx.phases?.lap('copy+hash');
  return { results, kept: { files: kept.size, bytes: keptBytes + stager.reusedBytes } };
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
  private readonly recorder: StagedFilesRecorder;
  private failed = false;
  private copiedFiles = 0;
  /** Bytes of the files copied that the store already held (CopyResult.reusedBytes). */
  reusedBytes = 0;

  constructor(
    private readonly ctx: DatasetImportContext,
    private readonly plan: ImportPlan,
    private readonly staging: StagingArea,
    private readonly progress: ProgressReporter,
    private readonly kept: ReadonlyMap<number, StagedFile>,
  ) {
    const files = plan.files;
    this.results = new Array<CopyResult>(files.length);
    for (const [index, staged] of kept) this.results[index] = resultOfKept(staged);
    this.md5 = plan.algorithms.includes('md5');
    this.order = files
      .map((_, i) => i)
      .filter((i) => !kept.has(i))
      .sort((a, b) => files[b].size - files[a].size);
    this.recorder = new StagedFilesRecorder(staging, ctx.recentChangeMs);
  }

  async run(): Promise<CopyResult[]> {
    const pool = this.ctx.copyPool;
    const local = this.staging.localFiles;
    try {
      if (pool && pool.size > 0 && local) await this.copyOnThreads(pool, local);
      else await this.copyOnLanes();
    } catch (error) {
      await this.recorder.flush();
      // Whatever a stop interrupted (a copy thread's file, an upload) is the stop.
      if (this.stopping) throw this.stopped();
      throw error;
    }
    await this.recorder.flush();
    if (this.copiedFiles < this.order.length) throw this.stopped();
    return this.results;
  }

  private get stopping(): boolean {
    return this.ctx.signal?.aborted ?? false;
  }

  private stopped(): ImportStoppedError {
    const staged = this.kept.size + this.recorder.recordedFiles;
    return new ImportStoppedError(
      `the worker is stopping: handed over with ${staged} of ${this.plan.files.length} files staged and recorded`,
    );
  }

  private readonly done = (index: number, result: CopyResult): void => {
    const file = this.plan.files[index];
    if (result.size !== file.size)
      throw new ImportTransientError(
        'source_changed',
        `${file.path} changed size between preflight and copy`,
      );
    this.results[index] = result;
    this.copiedFiles += 1;
    this.reusedBytes += result.reusedBytes ?? 0;
    this.recorder.copied(file.path, result);
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
      stopped: () => this.failed || this.stopping,
      signal: this.ctx.signal,
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
      if (this.failed || this.stopping) return;
      const buffers = buffersOfLanes.pop()!;
      try {
        const file = this.plan.files[index];
        const writer = await this.staging.createObject(file.path, file.size);
        const result = await copyWithHashes(
          join(this.plan.payloadRoot, file.path),
          file.path,
          writer,
          {
            md5: this.md5,
            identity: file,
            buffers,
            onBytes: this.onBytes,
            stopRequested: () => this.stopping,
          },
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
