import { join } from 'node:path';
import { mapLimit } from '../common/map-limit';
import { mergeSort } from '../common/merge-sort';
import { runTogether } from '../common/run-together';
import { Crypt4ghError } from '@app/crypt4gh';
import { depositStoredPath, isEncryptedDeposit } from '../storage/archive-storage';
import type {
  DepositedPlaintext,
  EncryptedLocalFiles,
  InheritedFiles,
  LocalFiles,
  StagedFile,
  StagingArea,
} from '../storage/storage-system';
import type { DatasetImportContext } from './dataset-import-context';
import { ImportRejectedError, ImportStoppedError, ImportTransientError } from './import-errors';
import type { ImportProgress } from '../imports/import-progress';
import type { ImportPlan } from './preflight';
import {
  BATCHES_PER_THREAD,
  copyFilesOnThreads,
  copyWithHashes,
  type CopyFile,
  type CopyResult,
  type CopyThreadPool,
  type FileIdentity,
  type ThreadedCopyRequest,
} from './copying';
import { ProblemList } from './problem-list';
import { copyRemoteObject } from './remote-copy';
import { checkDigests, keepComputedSha256 } from './verify-checksums.step';
import type { PlanListing, WalkedFeed } from './walked-feed';

/** What the copy reads of the plan: all of it, or a listing preflight is still walking. */
type StagedPlan = PlanListing & Partial<Pick<ImportPlan, 'remote'>> & { bytesTotal: number };

/**
 * What the staging step hands on: the files whose checksums differ from the manifests' (each
 * file is checked as its copy ends; the plan holds the sha256 of every file once this
 * returns), and what was kept.
 */
export interface StagedResults {
  mismatches: ProblemList;
  /**
   * Files an earlier attempt had staged that this one kept, and the bytes not written again:
   * theirs, and those of parts of other files the store already held (S3 uploads resumed).
   */
  kept: { files: number; bytes: number };
}

/**
 * Step 2: keeps what earlier attempts staged and is still what the source holds (keptFiles),
 * removes the rest of what they left, and copies every other planned file into the staging area,
 * hashing while copying and checking each file's checksums as it ends. What is copied is
 * recorded in the area as it goes, so a later attempt keeps it too. Progress is reported before
 * and after. When ctx.signal aborts (the worker is stopping), the copy stops after the chunk in
 * flight and ImportStoppedError is thrown once what was copied is recorded.
 */
export async function stageFiles(
  ctx: DatasetImportContext,
  plan: ImportPlan,
  staging: StagingArea,
): Promise<StagedResults> {
  // The area records what it stores by the plan's rows where it keeps such records (S3).
  staging.expectFiles?.(plan.files);
  const kept = keepInherited(plan, staging.inherited);
  await staging.discardExcept((path) => {
    const index = plan.files.indexOf(path);
    return index >= 0 && plan.files.kept(index);
  });
  const progress = new ProgressReporter(plan.files.count, plan.bytesTotal, ctx.reportProgress);
  progress.kept(kept.files, kept.bytes);
  await progress.flush();
  const stager = new FileStager(ctx, plan, staging, progress, kept.files);
  await stager.run();
  await progress.flush();
  return {
    mismatches: stager.mismatches,
    kept: { files: kept.files, bytes: kept.bytes + stager.reusedBytes },
  };
}

/**
 * Step 2 while preflight goes on (docs/decisions/stage-while-checking.md): a first attempt's
 * files copied on the copy threads as the walk vets them (WalkedFeed), each chunk as soon as it
 * is pushed. Once preflight halts the feed (the checks refused the import, the walk failed) no
 * new file starts, and this returns once every file in flight is done, so nothing writes into
 * the area after its caller removes it, nor reads through the payload's view after preflight
 * closed it. Resolves null when the feed ended without being opened (nothing
 * staged). The caller publishes nothing before the checks have passed.
 */
export async function stageWalkedFiles(
  ctx: DatasetImportContext,
  feed: WalkedFeed,
  staging: StagingArea,
): Promise<StagedResults | null> {
  try {
    return await stageFed(ctx, feed, staging);
  } finally {
    feed.finish();
  }
}

async function stageFed(
  ctx: DatasetImportContext,
  feed: WalkedFeed,
  staging: StagingArea,
): Promise<StagedResults | null> {
  const listing = await feed.opened();
  if (!listing || !(staging.localFiles ?? staging.encryptedLocalFiles)) return null;
  const plan: StagedPlan = { ...listing, bytesTotal: 0 };
  // The manifests are whole once the feed opens: deposit names are checked before any copy.
  checkDepositNames(ctx, plan);
  await staging.discardExcept(() => false);
  const progress = new ProgressReporter(listing.files.count, 0, ctx.reportProgress);
  await progress.flush();
  const stager = new FileStager(ctx, plan, staging, progress, 0, feed);
  await stager.run();
  progress.total(feed.pushedBytes);
  await progress.flush();
  return { mismatches: stager.mismatches, kept: { files: 0, bytes: 0 } };
}

/**
 * Files of at least this size go first, largest first, so that one does not start last and run
 * alone; the smaller ones follow in the walk's order (a directory's files together), unsorted.
 */
const LARGE_FIRST_BYTES = 1024 * 1024;

/** The plan indexes of `chunk`, its large files first (largest first), then the others in order. */
function largeFilesFirst(chunk: readonly number[], size: Float64Array): Uint32Array {
  const order = new Uint32Array(chunk.length);
  let large = 0;
  for (const index of chunk) if (size[index] >= LARGE_FIRST_BYTES) order[large++] = index;
  let at = large;
  for (const index of chunk) if (size[index] < LARGE_FIRST_BYTES) order[at++] = index;
  if (large > 1) mergeSort(order.subarray(0, large), (a, b) => size[b] - size[a]);
  return order;
}

/**
 * Archive mode: an encrypted deposit (`x.c4gh`) is stored as `x`, so a payload holding both is
 * refused before anything is copied or made. Only the manifests' paths are read.
 */
export function checkDepositNames(ctx: DatasetImportContext, { files }: PlanListing): void {
  if (ctx.storage.encryption === undefined) return;
  const problems = new ProblemList();
  for (let i = 0; i < files.count; i++) {
    const path = files.path(i);
    if (isEncryptedDeposit(path) && files.indexOf(depositStoredPath(path)) >= 0) {
      problems.add({
        code: 'c4gh_deposit_name_taken',
        path,
        message: `${path} would be stored as ${depositStoredPath(path)}, which the dataset also holds`,
      });
    }
  }
  if (problems.total > 0)
    throw new ImportRejectedError(
      'c4gh_deposit_name_taken',
      `${problems.total} encrypted deposit(s) would take the name of another file`,
      problems.details(),
    );
}

/** A deposited `*.c4gh` file the archive key does not open, or that is not Crypt4GH: bad input. */
function refusedDeposit(path: string, error: unknown): unknown {
  if (!(error instanceof Crypt4ghError)) return error;
  return new ImportRejectedError(
    'c4gh_deposit_refused',
    `${path} is not a Crypt4GH file the archive can take: ${error.message}`,
    [{ code: 'c4gh_deposit_refused', path, message: error.message }],
  );
}

/**
 * Files below this size, on a backend without local files (S3), are read and hashed whole on the
 * copy threads and only sent from here; larger ones stream through the lanes (a multipart
 * upload: never all of a file in memory).
 */
const READ_ON_THREADS_BELOW = 1024 * 1024;

/**
 * Files of a remote dataset (an S3 inbox) copied at once: each is a request whose answer starts
 * after a round trip, so small files are latency-bound; the lanes hold no buffers of their own.
 */
const REMOTE_COPY_LANES = 16;

/**
 * Where the copy threads create each file: as it is in the backend's local files, or encrypted
 * there with its header and body checksum (archive mode, StagingArea.encryptedLocalFiles).
 */
type ThreadTargets = Pick<ThreadedCopyRequest, 'prepare' | 'directWriteMinBytes' | 'encrypted'>;

function localTargets(local: LocalFiles): ThreadTargets {
  return {
    prepare: (path) => local.prepare(path),
    directWriteMinBytes: local.directWriteMinBytes,
  };
}

/**
 * One attempt's copy, one of three ways: on the copy threads (every file, where the backend's
 * objects are files on this host and IMPORT_COPY_THREADS > 0; in archive mode encrypted there,
 * but for deposits already encrypted); with threads but no local files (S3), small files read
 * on the threads and sent from here, large ones on the lanes; or else every file on parallel
 * lanes here (reads and writes on libuv's pool, hashing on this thread).
 */
class FileStager {
  private readonly md5: boolean;
  /**
   * Plan indexes, largest file first, so one big file does not start last and run alone; when
   * fed, the files taken so far.
   */
  private order: Uint32Array;
  private readonly recorder: StagedFilesRecorder;
  private failed = false;
  private copiedFiles = 0;
  /** Bytes of the files copied that the store already held (CopyResult.reusedBytes). */
  reusedBytes = 0;
  /** Files whose checksums are not the manifests' (the first 1,000, and the count). */
  readonly mismatches = new ProblemList();

  constructor(
    private readonly ctx: DatasetImportContext,
    private readonly plan: StagedPlan,
    private readonly staging: StagingArea,
    private readonly progress: ProgressReporter,
    /** Files kept from earlier attempts (marked in the plan). */
    private readonly keptFiles: number,
    /** The files come as preflight's walk vets them (stageWalkedFiles). */
    private readonly fed?: WalkedFeed,
  ) {
    const { size } = plan.files;
    this.md5 = plan.algorithms.includes('md5');
    if (fed) this.order = new Uint32Array(0);
    else {
      this.order = new Uint32Array(plan.files.count - keptFiles);
      let at = 0;
      for (let i = 0; i < plan.files.count; i++) if (!plan.files.kept(i)) this.order[at++] = i;
      mergeSort(this.order, (a, b) => size[b] - size[a]);
    }
    this.recorder = new StagedFilesRecorder(staging, plan.recentChangeMs);
  }

  async run(): Promise<void> {
    const pool = this.ctx.copyPool;
    const local = this.staging.localFiles;
    const encrypted = this.staging.encryptedLocalFiles;
    try {
      if (this.fed) {
        if (!pool || !(local || encrypted))
          throw new Error('a fed copy runs on the copy threads into local files');
        await this.copyFedOnThreads(this.fed, pool, local ? localTargets(local) : { encrypted });
      } else if (this.plan.remote) await this.copyRemote(this.plan.remote);
      else if (pool && pool.size > 0 && local) await this.copyOnThreads(pool, localTargets(local));
      else if (pool && pool.size > 0 && encrypted) await this.encryptOnThreads(pool, encrypted);
      else if (pool && pool.size > 0)
        // A backend without local files (S3): the threads' part ends with the reads.
        await this.readOnThreadsAndLanes(pool, this.order).finally(() => pool.endIdle());
      else await this.copyOnLanes(this.order);
    } catch (error) {
      await this.recorder.flush();
      // Whatever a stop interrupted (a copy thread's file, an upload) is the stop.
      if (this.stopping) throw this.stopped();
      throw error;
    }
    if (this.copiedFiles < this.order.length) {
      // Stopped: what was copied is recorded for the attempt that resumes.
      await this.recorder.flush();
      throw this.stopped();
    }
    // Every file copied: the flush step, next, makes them durable, and publication follows.
    await this.recorder.settle();
  }

  private get stopping(): boolean {
    return (this.ctx.signal?.aborted ?? false) || (this.fed?.halted ?? false);
  }

  private stopped(): ImportStoppedError {
    const staged = this.keptFiles + this.recorder.recordedFiles;
    return new ImportStoppedError(
      `the worker is stopping: handed over with ${staged} of ${this.plan.files.count} files staged and recorded`,
    );
  }

  private checkSize(index: number, result: CopyResult): void {
    const files = this.plan.files;
    if (result.size !== files.size[index])
      throw new ImportTransientError(
        'source_changed',
        `${files.path(index)} changed size between preflight and copy`,
      );
  }

  private readonly done = (
    index: number,
    result: CopyResult,
    plaintext?: DepositedPlaintext,
  ): void => {
    const path = this.plan.files.path(index);
    this.checkSize(index, result);
    checkDigests(this.plan, index, result, this.mismatches);
    keepComputedSha256(this.plan, index, result.sha256);
    if (plaintext) this.storedAsPlaintext(index, result.size, plaintext);
    this.copiedFiles += 1;
    this.reusedBytes += result.reusedBytes ?? 0;
    this.maybeFlushAhead();
    // A deposit is stored under another name than its plan path: no later attempt could keep
    // it, and an entry for it failed its whole batch's record (no object by that name to fsync
    // without syncfs, nor on S3 to journal).
    if (!plaintext) this.recorder.copied(path, result);
    this.progress.fileDone();
    this.ctx.copyMeter?.addFiles(1);
  };

  /** Files copied since the last flush ahead (StagingArea.flushAhead). */
  private sinceFlushAhead = 0;

  /**
   * Every FLUSH_AHEAD_FILES files copied, the area starts writing them out (where it can), so
   * the disk works while the copy goes on and the flush step at the end has only the tail left.
   */
  private maybeFlushAhead(): void {
    if (++this.sinceFlushAhead < FLUSH_AHEAD_FILES) return;
    this.sinceFlushAhead = 0;
    this.staging.flushAhead?.();
  }

  /**
   * A deposit stored re-wrapped (archive mode): its manifest checksums were those of the bytes
   * deposited (checked above); what the dataset lists from here on is its plain-text.
   */
  private storedAsPlaintext(index: number, depositedSize: number, plaintext: DepositedPlaintext) {
    const { files, algorithms } = this.plan;
    files.size[index] = plaintext.size;
    this.plan.bytesTotal += plaintext.size - depositedSize;
    files.setDigest('sha256', index, plaintext.sha256);
    if (algorithms.includes('md5')) files.setDigest('md5', index, plaintext.md5);
  }

  private readonly onBytes = (n: number): void => {
    this.progress.bytes(n);
    this.ctx.copyMeter?.addBytes(n);
  };

  /** What copies run together heed (runTogether): no new file or batch starts. */
  private readonly stopTogether = (): void => {
    this.failed = true;
  };

  /**
   * Every file on the copy threads, batch by batch: every core hashes, and they overlap what one
   * thread cannot, the ~30 µs of kernel time that creating each file costs.
   */
  private async copyOnThreads(
    pool: CopyThreadPool,
    targets: ThreadTargets,
    order = this.order,
  ): Promise<void> {
    await copyFilesOnThreads(pool, {
      stagingId: this.staging.id,
      md5: this.md5,
      sourceRoot: this.plan.payloadRoot,
      files: { length: order.length, at: (position) => this.fileAt(order[position]) },
      ...targets,
      copied: (position, result) => this.done(order[position], result),
      bytes: this.onBytes,
      stopped: () => this.failed || this.stopping,
      signal: this.ctx.signal,
    });
  }

  /**
   * Archive mode where the store's objects are files on this host: every file on the copy
   * threads, each encrypted there with its header and body checksum (EncryptedLocalFiles), as
   * copyOnThreads; a deposit already encrypted (`*.c4gh`) is re-wrapped through createObject
   * (readOnThreadsAndLanes) meanwhile. The first failure stops both.
   */
  private async encryptOnThreads(
    pool: CopyThreadPool,
    encrypted: EncryptedLocalFiles,
  ): Promise<void> {
    const { files } = this.plan;
    const deposit = (index: number) => isEncryptedDeposit(files.path(index));
    const deposits = this.order.filter(deposit);
    const others = deposits.length === 0 ? this.order : this.order.filter((i) => !deposit(i));
    const copies = [() => this.copyOnThreads(pool, { encrypted }, others)];
    if (deposits.length > 0) copies.push(() => this.readOnThreadsAndLanes(pool, deposits));
    await runTogether(copies, this.stopTogether);
  }

  /**
   * copyOnThreads for each chunk the feed hands over, started as it comes (the chunks share the
   * threads with the walk, and each other): the first failure stops the rest.
   */
  private async copyFedOnThreads(
    feed: WalkedFeed,
    pool: CopyThreadPool,
    targets: ThreadTargets,
  ): Promise<void> {
    const taken: number[] = [];
    await runTogether(this.chunkCopies(feed, pool, targets, taken), this.stopTogether);
    // What run() compares the files copied with.
    this.order = Uint32Array.from(taken);
  }

  /**
   * One copy for each chunk the feed hands over (its files added to `taken`), until it ends.
   * Archive mode's deposits (`*.c4gh`) wait until then: re-wrapping one sets its plan size to
   * its plain-text's, which preflight must not see while it sums the sizes it walked.
   */
  private async *chunkCopies(
    feed: WalkedFeed,
    pool: CopyThreadPool,
    targets: ThreadTargets,
    taken: number[],
  ): AsyncGenerator<() => Promise<void>> {
    const { files } = this.plan;
    const deposits: number[] = [];
    for (let chunk = await feed.take(); chunk; chunk = await feed.take()) {
      if (this.failed || this.stopping) continue;
      let now = chunk;
      if (targets.encrypted) {
        now = [];
        for (const index of chunk)
          (isEncryptedDeposit(files.path(index)) ? deposits : now).push(index);
      }
      for (const index of chunk) taken.push(index);
      this.progress.total(feed.pushedBytes);
      if (now.length > 0)
        yield () => this.copyOnThreads(pool, targets, largeFilesFirst(now, files.size));
    }
    if (deposits.length > 0 && !this.failed && !this.stopping)
      yield () => this.readOnThreadsAndLanes(pool, Uint32Array.from(deposits));
  }

  /**
   * S3 with copy threads: the small files are read and hashed on the threads (blocking reads
   * there cost a few µs a file; here each was six round trips through libuv's pool) and sent
   * from here, while the large ones stream through the lanes. The first failure stops both.
   */
  private async readOnThreadsAndLanes(pool: CopyThreadPool, order: Uint32Array): Promise<void> {
    const { size } = this.plan.files;
    const large = order.filter((index) => size[index] >= READ_ON_THREADS_BELOW);
    // Most often every file is small: no second list of them all.
    const small =
      large.length === 0 ? order : order.filter((index) => size[index] < READ_ON_THREADS_BELOW);
    await runTogether(
      [() => this.copyOnLanes(large), () => this.sendReadOnThreads(pool, small)],
      this.stopTogether,
    );
  }

  private async sendReadOnThreads(pool: CopyThreadPool, small: Uint32Array): Promise<void> {
    // The lanes' number of uploads in flight, shared by the batches being sent at once.
    const batchesAtOnce = Math.max(1, pool.size) * BATCHES_PER_THREAD;
    await copyFilesOnThreads(pool, {
      stagingId: this.staging.id,
      md5: this.md5,
      sourceRoot: this.plan.payloadRoot,
      files: { length: small.length, at: (position) => this.fileAt(small[position]) },
      copied: async (position, result, bytes) => {
        if (this.stopping) return;
        const index = small[position];
        this.checkSize(index, result);
        const path = this.plan.files.path(index);
        const writer = await this.staging.createObject(path, result.size);
        try {
          await writer.write(bytes!);
          await writer.commit();
        } catch (error) {
          await writer.abort().catch(() => undefined);
          throw refusedDeposit(path, error);
        }
        this.done(index, result, writer.plaintext);
      },
      bytes: this.onBytes,
      stopped: () => this.failed || this.stopping,
      signal: this.ctx.signal,
      storeConcurrency: Math.ceil(this.staging.copyLanes / batchesAtOnce),
    });
  }

  /** Planned file `index` as the copy takes it. */
  private fileAt(index: number): CopyFile & FileIdentity {
    const files = this.plan.files;
    return {
      path: files.path(index),
      size: files.size[index],
      dev: files.devOf(index),
      ino: files.inoOf(index),
    };
  }

  /**
   * Without copy threads (IMPORT_COPY_THREADS=0), or the large files of a backend without local
   * files: the backend's number of lanes, each with three buffers (read, hash, write overlap). The first
   * failure stops new files, and every lane finishes its file before this returns, so no write
   * lands after the caller removes the staging area.
   */
  private async copyOnLanes(order: Uint32Array): Promise<void> {
    const lanes = this.lanes();
    const bufferBytes = this.ctx.bufferBytes ?? this.staging.copyBufferBytes;
    const buffersOfLanes = Array.from(
      { length: Math.min(lanes, order.length) },
      (): [Buffer, Buffer, Buffer] => [
        Buffer.allocUnsafe(bufferBytes),
        Buffer.allocUnsafe(bufferBytes),
        Buffer.allocUnsafe(bufferBytes),
      ],
    );
    await this.onLanes(order, lanes, async (index) => {
      const buffers = buffersOfLanes.pop()!;
      const file = this.fileAt(index);
      try {
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
        this.done(index, result, writer.plaintext);
      } finally {
        buffersOfLanes.push(buffers);
      }
    });
  }

  /**
   * A remote dataset (an S3 inbox): every file on the lanes, read from the store by the version
   * preflight listed, and copied server-side where the storage is the same store.
   */
  private async copyRemote(dataset: NonNullable<ImportPlan['remote']>) {
    const { files } = this.plan;
    const lanes = this.ctx.copyConcurrency ?? Math.max(REMOTE_COPY_LANES, this.staging.copyLanes);
    await this.onLanes(this.order, lanes, async (index) => {
      const { result, plaintext } = await copyRemoteObject(
        dataset,
        {
          path: files.path(index),
          size: files.size[index],
          etag: files.version(index),
          source: {
            ino: files.inoOf(index),
            size: files.size[index],
            mtimeMs: files.mtimeMs![index],
            ctimeMs: files.ctimeMs![index],
          },
        },
        this.staging,
        {
          md5: this.md5,
          serverSide: true,
          onBytes: this.onBytes,
          stopRequested: () => this.stopping,
        },
      );
      this.done(index, result, plaintext);
    });
  }

  private lanes(): number {
    return Math.max(1, this.ctx.copyConcurrency ?? this.staging.copyLanes);
  }

  /**
   * Runs `copy` for the files in `order`, `lanes` at a time. The first failure stops new files,
   * and every lane finishes its file before this returns, so no write lands after the caller
   * removes the staging area.
   */
  private async onLanes(
    order: Uint32Array,
    lanes: number,
    copy: (index: number) => Promise<void>,
  ): Promise<void> {
    let firstError: { error: unknown } | undefined;
    await mapLimit(Array.from(order), lanes, async (index) => {
      if (this.failed || this.stopping) return;
      try {
        await copy(index);
      } catch (error) {
        this.failed = true;
        firstError ??= { error: refusedDeposit(this.plan.files.path(index), error) };
      }
    });
    if (firstError) throw firstError.error;
  }
}

/**
 * How often the copy asks the area to start writing out what it copied (flushAhead): by files
 * only, as measured on many small ones (docs/decisions/small-files-finish.md); a few large files
 * never reach it.
 */
const FLUSH_AHEAD_FILES = 2_000;

/**
 * Copied files are recorded within this long (a kill loses at most this much finished copying
 * besides the files in flight, and, once the copy is over, the flush and publish steps' time), each time with one flush of the storage (syncfs), so not more
 * often: ...
 */
const RECORD_INTERVAL_MS = 1000;
/** ...unless this many bytes or files are waiting to be recorded. */
const RECORD_BYTES = 256 * 1024 * 1024;
const RECORD_FILES = 10_000;

/**
 * Marks the planned files an earlier attempt staged that this one keeps: the staged copy is
 * still the one recorded (the storage checked its size, and on S3 its ETag), the source file is
 * the one it was copied from (inode, size, modification and change times: a file rewritten,
 * replaced or touched since is copied again) and the checksums computed while it was copied are
 * the ones the manifest now lists. The device is not compared: another node mounts the same
 * share under another device number. Returns how many files and bytes are kept.
 */
function keepInherited(
  plan: ImportPlan,
  inherited: InheritedFiles,
): { files: number; bytes: number } {
  const kept = { files: 0, bytes: 0 };
  for (let k = 0; k < inherited.length; k++) {
    const staged = inherited.at(k)!;
    const index = plan.files.indexOf(staged.path);
    if (index < 0 || plan.files.kept(index) || !stillTheSame(plan, index, staged)) continue;
    plan.files.keep(index);
    keepComputedSha256(plan, index, staged.sha256);
    kept.files += 1;
    kept.bytes += staged.size;
  }
  return kept;
}

function stillTheSame({ files, algorithms }: ImportPlan, i: number, staged: StagedFile): boolean {
  const { source } = staged;
  const size = files.size[i];
  return (
    files.mtimeMs !== null &&
    files.ctimeMs !== null &&
    staged.size === size &&
    source.size === size &&
    source.ino === files.inoOf(i) &&
    source.mtimeMs === files.mtimeMs[i] &&
    source.ctimeMs === files.ctimeMs[i] &&
    (!algorithms.includes('sha256') || files.digestIs('sha256', i, staged.sha256)) &&
    (!algorithms.includes('md5') || (staged.md5 !== null && files.digestIs('md5', i, staged.md5)))
  );
}

/**
 * Records the files an attempt has copied into its staging area (StagingArea.record) in batches,
 * in the background while the copy goes on: RECORD_INTERVAL_MS after the last batch, sooner
 * past RECORD_BYTES or RECORD_FILES (each once the copy's current turn is over), and when the
 * copy stops or fails (flush); once every file is copied, nothing more (settle: the flush step
 * that comes next makes them durable, docs/decisions/small-files-finish.md). A batch that
 * cannot be recorded only costs a later attempt the copy of its files again; it never fails
 * this one.
 */
class StagedFilesRecorder {
  private pending: StagedFile[] = [];
  private pendingBytes = 0;
  private lastRecorded = Date.now();
  private recording: Promise<void> | null = null;
  private timer: NodeJS.Timeout | undefined;
  /** Files whose record is durable. */
  recordedFiles = 0;

  constructor(
    private readonly staging: StagingArea,
    /** The plan's (ImportPlan.recentChangeMs): null records every file whatever its times. */
    private readonly recentChangeMs: number | null,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * A file copied and committed; skipped when its source changed too recently to be trusted
   * (its ctime within recentChangeMs of our clock, or ahead of it: a file server's clock ahead).
   */
  copied(path: string, result: CopyResult): void {
    const { source } = result;
    if (this.recentChangeMs !== null && this.now() - source.ctimeMs < this.recentChangeMs) return;
    this.pending.push({ path, sha256: result.sha256, md5: result.md5, size: result.size, source });
    this.pendingBytes += result.size;
    if (this.pendingBytes >= RECORD_BYTES || this.pending.length >= RECORD_FILES) this.recordSoon();
    else this.schedule();
  }

  /** Due now: recorded once the copy's current turn is over, unless settle() comes first. */
  private recordSoon(): void {
    if (this.recording) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.recordPending(), 0);
    this.timer.unref();
  }

  /**
   * The staging step has copied every file: nothing more is recorded. The flush step makes
   * them durable next and publication follows, after which no attempt looks at the journal; a
   * batch being recorded is waited for (its journal must not land in the published tree).
   */
  async settle(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.pending = [];
    this.pendingBytes = 0;
    while (this.recording) await this.recording;
  }

  /** Records what is pending RECORD_INTERVAL_MS after the last batch, whether files finish or not. */
  private schedule(): void {
    if (this.timer || this.recording) return;
    const due = this.lastRecorded + RECORD_INTERVAL_MS - this.now();
    if (due <= 0) {
      this.recordSoon();
      return;
    }
    this.timer = setTimeout(() => void this.recordPending(), due);
    this.timer.unref();
  }

  /** Waits for the batch being recorded, then records what is left. */
  async flush(): Promise<void> {
    while (this.recording) await this.recording;
    if (this.pending.length > 0) await this.recordPending();
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private recordPending(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.recording) return this.recording;
    if (this.pending.length === 0) return Promise.resolve();
    const batch = this.pending;
    this.pending = [];
    this.pendingBytes = 0;
    this.lastRecorded = this.now();
    this.recording = this.staging
      .record(batch)
      .then(
        () => void (this.recordedFiles += batch.length),
        () => undefined,
      )
      .finally(() => {
        this.recording = null;
        if (this.pending.length > 0) this.schedule();
      });
    return this.recording;
  }
}

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

  /** The bytes to copy, once a walk that went on during the copy has found them all. */
  total(bytes: number): void {
    this.progress.bytes_total = bytes;
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
