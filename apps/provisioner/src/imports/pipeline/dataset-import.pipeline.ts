import { join } from 'node:path';
import { mapLimit } from '../../common/map-limit';
import { mapTimeSliced } from '../../common/time-sliced';
import {
  DEFAULT_SOURCE_LIMITS,
  SourceLimits,
} from '../../sources/dataset-directory/dataset-directory';
import { formatManifest } from '../../sources/dataset-directory/manifest';
import { SourceSystem } from '../../sources/source-system';
import {
  datasetPath,
  PROVENANCE_DIR,
  PROVENANCE_FILE,
  STORED_MANIFEST_FILE,
} from '../../storage/storage-layout';
import { StagingArea, StorageSystem, TargetExistsError } from '../../storage/storage-system';
import { attemptStagingId, removeStagingOfImport } from '../attempt-staging';
import { copySmallFileWithHashes, copyWithHashes, CopyResult } from './hashing-copy';
import { ImportProblem, ImportRejectedError, ImportTransientError } from './import-errors';
import { PhaseClock } from './import-phases';
import { ImportProgress, ProgressReporter } from './import-progress';
import { ImportPlan, preflightDataset, PlannedFile } from './preflight';
import { parseProvenance, Provenance, ProvenanceFile } from './provenance';
import { copySmallFilesOnThreads, DEFAULT_COPY_THREADS } from './small-file-pool';
import { ensureSubmissionCollection, submissionImportProblem } from './submission-collection';

export interface DatasetImportContext {
  importId: string;
  attempt: number;
  queuedAt: Date | null;
  source: SourceSystem;
  storage: StorageSystem;
  datasetId: string;
  versions: Record<string, string>;
  reportProgress: (progress: ImportProgress) => Promise<void>;
  /** Counts what is copied as it is copied (the worker's import metrics). */
  copyMeter?: CopyMeter;
  /** Large files copied in parallel (small files go on copy threads, alongside). */
  copyConcurrency?: number;
  bufferBytes?: number;
  /** Files up to this size are copied in blocking calls (see copySmallFileWithHashes). */
  smallFileBytes?: number;
  /**
   * Threads that copy the small files (IMPORT_COPY_THREADS; default DEFAULT_COPY_THREADS);
   * 0 copies them on the main thread in time slices.
   */
  copyThreads?: number;
  /** Test hook for the copy threads: a module exporting afterChunk(path, source), see SmallFileBatch. */
  threadAfterChunkModule?: string;
  /** Test hook, called after every chunk read. */
  afterChunk?: (path: string) => Promise<void>;
  /** Caps on the dataset's metadata (SOURCE_*_MAX_BYTES); default DEFAULT_SOURCE_LIMITS. */
  sourceLimits?: SourceLimits;
  /** Charged with each phase's time as the import goes (the worker logs it). */
  phases?: PhaseClock;
}

export interface CopyMeter {
  addBytes(n: number): void;
  addFiles(n: number): void;
}

export interface DatasetImportResult {
  path: string;
  files: number;
  bytes: number;
  /** False when the dataset was found already published by this very import (a re-run after a crash). */
  copied: boolean;
}

const DEFAULT_COPY_CONCURRENCY = 6;
/** Three per large-file lane: 4 lanes hold 24 MiB, whatever the file sizes. */
const DEFAULT_BUFFER_BYTES = 2 * 1024 * 1024;
const DEFAULT_SMALL_FILE_BYTES = 64 * 1024;
const SHARED_SLICE_MS = 2;

/**
 * One dataset import: preflight -> stage (hash while copying, fsync, stat before/after) ->
 * verify against the manifest -> write .provisioner/ -> publish with one rename, read-only.
 * Throws ImportRejectedError for bad input and anything else for faults worth a retry.
 */
export async function runDatasetImport(ctx: DatasetImportContext): Promise<DatasetImportResult> {
  const startedAt = new Date();
  // The payload is checked file by file in preflight: not read here a first time.
  const found = await ctx.source.findDataset(ctx.datasetId, { payload: false });
  if (!found)
    throw new ImportRejectedError(
      'unknown_dataset',
      `source ${ctx.source.name} no longer lists dataset ${ctx.datasetId}`,
    );
  const { dataset, submission } = found;
  // Other not-ready reasons are left to preflight, which lists every problem in detail.
  if (
    dataset.reason === 'submission_not_eligible' ||
    dataset.reason === 'not_delivered' ||
    dataset.reason === 'metadata_refused' ||
    dataset.reason === 'metadata_invalid'
  ) {
    throw new ImportRejectedError(
      dataset.reason === 'metadata_refused' || dataset.reason === 'metadata_invalid'
        ? dataset.reason
        : 'not_ready',
      `dataset ${ctx.datasetId} is not ready (${dataset.reason}${dataset.reasonDetail ? `: ${dataset.reasonDetail}` : ''})`,
      dataset.problems,
    );
  }
  // Before any path is made of the project name: it must be one safe segment.
  const problem = submissionImportProblem(submission);
  if (problem) throw new ImportRejectedError(problem.reason, problem.message);
  const target = datasetPath(submission.project, submission.ref, ctx.datasetId);
  const existing = await publishedBy(ctx.storage, target);
  // This attempt holds the import's job lock: staging of earlier attempts is garbage.
  await removeStagingOfImport(ctx.storage, ctx.importId);
  if (existing === ctx.importId) {
    const provenance = parseProvenance(
      await ctx.storage.readObject(`${target}/${PROVENANCE_DIR}/${PROVENANCE_FILE}`),
    )!;
    return {
      path: target,
      files: provenance.totals.files,
      bytes: provenance.totals.bytes,
      copied: false,
    };
  }
  if (existing !== null)
    throw new ImportRejectedError(
      'target_exists',
      `${target} already exists in storage and was not published by this import`,
    );

  const location = ctx.source.locateDataset(ctx.datasetId);
  const plan = await preflightDataset(location, () => ctx.storage.freeBytes(), {
    limits: ctx.sourceLimits ?? DEFAULT_SOURCE_LIMITS,
    identity: dataset.directoryIdentity,
  });
  try {
    return await stageAndPublish(ctx, found, plan, target, startedAt);
  } finally {
    await plan.release();
  }
}

async function stageAndPublish(
  ctx: DatasetImportContext,
  { dataset, submission }: NonNullable<Awaited<ReturnType<SourceSystem['findDataset']>>>,
  plan: ImportPlan,
  target: string,
  startedAt: Date,
): Promise<DatasetImportResult> {
  await ensureSubmissionCollection(
    ctx.storage,
    ctx.source,
    submission,
    attemptStagingId(ctx.importId, 'collection', ctx.attempt),
    startedAt,
  );

  const stagingId = attemptStagingId(ctx.importId, 'data', ctx.attempt);
  const staging = await ctx.storage.openStaging(stagingId);
  try {
    const progress = new ProgressReporter(plan.files.length, plan.bytesTotal, ctx.reportProgress);
    await progress.flush();
    ctx.phases?.lap('preflight');
    const results = await stageFiles(
      ctx,
      plan.payloadRoot,
      plan.files,
      plan.algorithms.includes('md5'),
      staging,
      progress,
    );
    await progress.flush();
    ctx.phases?.lap('copy+hash');
    verify(plan.files, results);
    const files: ProvenanceFile[] = plan.files.map((file, i) => ({
      path: file.path,
      size: results[i].size,
      sha256: results[i].sha256,
      ...(results[i].md5 ? { md5: results[i].md5 } : {}),
    }));
    const provenance: Provenance = {
      format: 'provisioner-provenance/1',
      source: { name: ctx.source.name, type: ctx.source.type },
      submission: { ref: submission.ref, project: submission.project },
      dataset: { dataset_id: ctx.datasetId, title: dataset.title, metadata: dataset.metadata },
      import: {
        id: ctx.importId,
        attempt: ctx.attempt,
        queued_at: ctx.queuedAt?.toISOString() ?? null,
        started_at: startedAt.toISOString(),
        staged_at: new Date().toISOString(),
      },
      versions: ctx.versions,
      totals: { files: files.length, bytes: plan.bytesTotal },
      verification: {
        result: 'passed',
        manifests: plan.algorithms,
        computed: plan.algorithms.includes('md5') ? ['sha256', 'md5'] : ['sha256'],
      },
      files,
    };
    await staging.writeSmallObject(
      `${PROVENANCE_DIR}/${STORED_MANIFEST_FILE}`,
      formatManifest(files.map((f) => [f.path, f.sha256])),
    );
    await staging.writeSmallObject(
      `${PROVENANCE_DIR}/${PROVENANCE_FILE}`,
      `${JSON.stringify(provenance, null, 2)}\n`,
    );
    ctx.phases?.lap('verify');
    await staging.sync();
    ctx.phases?.lap('flush');
    // The source may have withdrawn the submission while we copied: do not publish then.
    const latest = await ctx.source.getSubmission(submission.ref);
    if (!latest?.eligible)
      throw new ImportRejectedError(
        'submission_withdrawn',
        `submission ${submission.ref} is no longer eligible (status "${latest?.status ?? 'gone'}")`,
      );
    await ctx.storage.publish(stagingId, target, { readOnly: true });
    ctx.phases?.lap('publish');
    return { path: target, files: files.length, bytes: plan.bytesTotal, copied: true };
  } catch (error) {
    await ctx.storage.removeStaging(stagingId).catch(() => undefined);
    if (error instanceof TargetExistsError)
      throw new ImportRejectedError(
        'target_exists',
        `${target} appeared in storage during the import`,
      );
    throw error;
  }
}

/** The import id recorded in a published dataset, '' for a path without provenance, null when absent. */
async function publishedBy(storage: StorageSystem, target: string): Promise<string | null> {
  if (!(await storage.exists(target))) return null;
  const provenance = parseProvenance(
    await storage.readObject(`${target}/${PROVENANCE_DIR}/${PROVENANCE_FILE}`),
  );
  return provenance?.import.id ?? '';
}

async function stageFiles(
  ctx: DatasetImportContext,
  payloadRoot: string,
  files: PlannedFile[],
  md5: boolean,
  staging: StagingArea,
  progress: ProgressReporter,
): Promise<CopyResult[]> {
  const results = new Array<CopyResult>(files.length);
  const done = (index: number, result: CopyResult): void => {
    if (result.size !== files[index].size) {
      throw new ImportTransientError(
        'source_changed',
        `${files[index].path} changed size between preflight and copy`,
      );
    }
    results[index] = result;
    progress.fileDone();
    ctx.copyMeter?.addFiles(1);
  };
  const onBytes = (n: number): void => {
    progress.bytes(n);
    ctx.copyMeter?.addBytes(n);
  };
  // Largest first, so one big file does not start last and run alone at the end.
  const order = files.map((_, i) => i).sort((a, b) => files[b].size - files[a].size);
  const smallLimit = ctx.smallFileBytes ?? DEFAULT_SMALL_FILE_BYTES;
  const threads = ctx.copyThreads ?? DEFAULT_COPY_THREADS;
  const prepare = staging.prepareLocalObject?.bind(staging);
  // With copy threads every file goes to them, large ones too: each thread hashes what it
  // copies, so every core hashes (on this thread only one core would hash the large files).
  const onThreads = threads > 0 && prepare !== undefined && !ctx.afterChunk;
  // The async test hook needs the async path; so does a backend without blocking writes.
  const blocking = onThreads
    ? Infinity
    : staging.createObjectSync && !ctx.afterChunk
      ? smallLimit
      : -1;
  const large = order.filter((i) => files[i].size > blocking);
  const small = order.filter((i) => files[i].size <= blocking);
  let failed = false;
  const copyLarge = async (): Promise<void> => {
    const lanes = Math.min(
      large.length,
      Math.max(1, ctx.copyConcurrency ?? DEFAULT_COPY_CONCURRENCY),
    );
    const bufferBytes = ctx.bufferBytes ?? DEFAULT_BUFFER_BYTES;
    const pool = Array.from({ length: lanes }, () => {
      const buffers: [Buffer, Buffer, Buffer] = [
        Buffer.allocUnsafe(bufferBytes),
        Buffer.allocUnsafe(bufferBytes),
        Buffer.allocUnsafe(bufferBytes),
      ];
      return buffers;
    });
    await mapLimit(large, lanes, async (index) => {
      if (failed) return;
      const buffers = pool.pop()!;
      try {
        const file = files[index];
        const writer = await staging.createObject(file.path);
        const result = await copyWithHashes(join(payloadRoot, file.path), file.path, writer, {
          md5,
          identity: file,
          buffers,
          onBytes,
          afterChunk: ctx.afterChunk ? () => ctx.afterChunk!(file.path) : undefined,
        });
        done(index, result);
      } finally {
        pool.push(buffers);
      }
    });
  };
  const copySmall = async (): Promise<void> => {
    if (small.length === 0) return;
    // On the copy threads, batch by batch (every file, see onThreads): they overlap what one
    // thread cannot, the hashing and the ~30 µs of kernel time that creating each file costs.
    if (onThreads) {
      await copySmallFilesOnThreads({
        threads,
        stagingId: staging.id,
        md5,
        sourceRoot: payloadRoot,
        files: small.map((index) => files[index]),
        prepare,
        copied: (position, result) => done(small[position], result),
        bytes: onBytes,
        stopped: () => failed,
        afterChunkModule: ctx.threadAfterChunkModule,
      });
      return;
    }
    // Without threads: one at a time in blocking calls, in time slices, while the large files'
    // reads and writes run on the thread pool: one core hashes, the other moves bytes.
    const buffer = Buffer.allocUnsafe(Math.max(1, Math.min(smallLimit, files[small[0]].size + 1)));
    // Short slices while large copies run: each of their chunks waits for the slice to end.
    const sliceMs = large.length > 0 ? SHARED_SLICE_MS : undefined;
    await mapTimeSliced(
      small,
      (index) => {
        if (failed) return;
        const file = files[index];
        const writer = staging.createObjectSync!(file.path);
        done(
          index,
          copySmallFileWithHashes(join(payloadRoot, file.path), file.path, writer, {
            md5,
            identity: file,
            buffer,
            onBytes,
          }),
        );
      },
      sliceMs,
    );
  };
  // Both halves settle before the caller removes the staging area: no write lands after it.
  const outcomes = await Promise.allSettled(
    [copyLarge(), copySmall()].map((p) =>
      p.catch((error: unknown) => {
        failed = true;
        throw error;
      }),
    ),
  );
  for (const outcome of outcomes) if (outcome.status === 'rejected') throw outcome.reason;
  return results;
}

function verify(files: PlannedFile[], results: CopyResult[]): void {
  const problems: ImportProblem[] = [];
  files.forEach((file, i) => {
    if (file.expected.sha256 && file.expected.sha256 !== results[i].sha256) {
      problems.push({
        code: 'checksum_mismatch',
        path: file.path,
        message: `sha256 expected ${file.expected.sha256}, computed ${results[i].sha256}`,
      });
    }
    if (file.expected.md5 && file.expected.md5 !== results[i].md5) {
      problems.push({
        code: 'checksum_mismatch',
        path: file.path,
        message: `md5 expected ${file.expected.md5}, computed ${results[i].md5}`,
      });
    }
  });
  if (problems.length > 0)
    throw new ImportRejectedError(
      'checksum_mismatch',
      `${problems.length} checksum(s) do not match the manifest`,
      problems,
    );
}
