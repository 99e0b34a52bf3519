import { dirname, join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { OnApplicationShutdown } from '@nestjs/common';
import { mapLimit } from '../../common/map-limit';
import { startWorkerThread } from '../../common/worker-thread';
import { CopyResult } from './hashing-copy';
import {
  reviveError,
  CopyBatch,
  CopyBatchProgress,
  CopyBatchReply,
  FileCopyJob,
  WalkBatch,
  WalkBatchReply,
} from './copy-batch';
import type { FileReadJob, ReadBatch, ReadBatchReply } from './read-batch';
import type { EncryptedLocalFiles } from '../../storage/storage-system';

/** Two batches queued per thread: it starts the next while the main thread reads the last. */
export const BATCHES_PER_THREAD = 2;
/** Files per message: ~10 ms of work for 4 KiB files (32, 128 and 512 measured the same). */
const DEFAULT_FILES_PER_BATCH = 128;
/**
 * Bytes per message, too: a batch is closed once it holds this much, and a file this large is
 * a batch of its own, handed out largest first like any batch (so three large files start on
 * both threads at once instead of queueing behind each other on one).
 */
const BATCH_BYTES = 1024 * 1024;
/** Read buffer per thread: a small file is read in one call, a large one in 1 MiB chunks. */
const MAX_BUFFER_BYTES = 1024 * 1024;

/**
 * A thread's garbage is a batch's worth (stat results, hashes, a few strings per file): a young
 * generation of 1 MiB instead of V8's default keeps each thread's resident set ~3 MiB smaller
 * (the worker's peak memory is a benchmark target), for no measurable copy time.
 */
const THREAD_LIMITS = { maxYoungGenerationSizeMb: 1 };

/**
 * When a thread is ended for its memory. Between imports: once idle `idleMs` (an import's batches
 * follow each other closely, so only the gaps between imports, or between a large import's
 * phases, are this long) with a V8 heap grown more than `heapGrowth` bytes since it loaded.
 * During an import: once grown more than `drainHeapGrowth`, the thread takes no new batch and
 * ends as soon as its batches are answered, between two files (on both backends, since a
 * filesystem import's threads are seldom idle at all). A thread's heap grows with a large
 * import's garbage (5 MiB at start, 19-24 MiB each after 300,000 files) and V8 does not give
 * it back while the thread waits or works; a new thread starts with the next batch (tens of
 * milliseconds), so a million-file import replaces its threads a few times instead of carrying
 * two grown heaps to its end.
 */
export interface RetireBound {
  idleMs: number;
  heapGrowth: number;
  drainHeapGrowth: number;
}
const RETIRE_IDLE_THREADS: RetireBound = {
  idleMs: 2000,
  heapGrowth: 8 * 1024 * 1024,
  drainHeapGrowth: 6 * 1024 * 1024,
};
/**
 * With S3 storage every thread that has worked ends once idle 2 s, grown or not: an import's
 * reads end with its copy, so the thread is gone through the flush and publish (a million
 * objects' manifest, provenance and listing, the import's last and largest steps in memory),
 * and a new one starts with the next import's first batch (tens of milliseconds beside the
 * uploads' round trips). On local storage the threads stay, as a small import would wait for
 * the start.
 */
export const RETIRE_IDLE_S3_THREADS: RetireBound = {
  ...RETIRE_IDLE_THREADS,
  heapGrowth: -Infinity,
};

/** The copy threads' code, without extension (see startWorkerThread). */
export const COPY_THREAD_ENTRY = join(__dirname, 'file-copy.thread');

let threadIds = 0;

type Batch = CopyBatch | WalkBatch | ReadBatch;
/** A batch before the pool numbers it. */
type Unnumbered<B> = B extends Batch ? Omit<B, 'id'> : never;
type Reply = CopyBatchReply | WalkBatchReply | ReadBatchReply;
/** The answer a thread gives to a batch of this kind. */
type ReplyTo<B> = B extends WalkBatch
  ? WalkBatchReply
  : B extends ReadBatch
    ? ReadBatchReply
    : CopyBatchReply;

/** One worker thread and the batches it has been sent, answered in order. */
class CopyThread {
  readonly id = ++threadIds;
  readonly ready: Promise<void>;
  private readonly worker: Worker;
  private readonly waiting = new Map<
    number,
    {
      resolve: (reply: Reply) => void;
      reject: (error: Error) => void;
      onBytes: (bytes: number) => void;
    }
  >();
  private crash: Error | null = null;
  private exited = false;
  private markReady!: () => void;
  private markFailed!: (error: Error) => void;
  /** The thread's heap growth at its last answer (ThreadReply.heapGrowth); none before one. */
  private heapGrowth: number | null = null;
  private retireTimer: NodeJS.Timeout | undefined;

  constructor(
    entry: string,
    private readonly retireBound: RetireBound,
    private readonly events: {
      settled(thread: CopyThread): void;
      exited(thread: CopyThread): void;
      /** Idle past the bound (see RetireBound). */
      idleTooLong(thread: CopyThread): void;
    },
  ) {
    this.ready = new Promise<void>((resolve, reject) => {
      this.markReady = resolve;
      this.markFailed = reject;
    });
    // Awaited by start() only; a thread that fails to load also fails its batches.
    this.ready.catch(() => undefined);
    this.worker = startWorkerThread(entry, {
      resourceLimits: THREAD_LIMITS,
    });
    this.worker.on('message', (message: Reply | CopyBatchProgress | 'ready') => {
      if (message === 'ready') {
        this.markReady();
        this.idle();
        return;
      }
      if ('progress' in message) {
        this.waiting.get(message.id)?.onBytes(message.progress);
        return;
      }
      const waiter = this.waiting.get(message.id);
      this.waiting.delete(message.id);
      this.heapGrowth = message.heapGrowth ?? this.heapGrowth;
      this.idle();
      if ('bytes' in message) waiter?.onBytes(message.bytes);
      waiter?.resolve(message);
      this.events.settled(this);
    });
    this.worker.on('error', (error) => {
      this.crash ??= error;
    });
    // Batches fail only once the thread has stopped: no write of theirs can land afterwards.
    this.worker.on('exit', (code) => {
      this.exited = true;
      const error = this.crash ?? new Error(`copy thread exited with code ${code}`);
      this.markFailed(error);
      const waiters = [...this.waiting.values()];
      this.waiting.clear();
      for (const waiter of waiters) waiter.reject(error);
      this.events.exited(this);
    });
  }

  get load(): number {
    return this.waiting.size;
  }

  /** Grown past the drain bound (RetireBound): it takes no new batch and ends once idle. */
  get draining(): boolean {
    return this.heapGrowth !== null && this.heapGrowth > this.retireBound.drainHeapGrowth;
  }

  run(id: number, batch: Unnumbered<Batch>, onBytes: (bytes: number) => void): Promise<Reply> {
    if (this.exited) return Promise.reject(this.crash ?? new Error('copy thread gone'));
    // Busy threads keep the process alive (a script awaiting its import); idle ones do not.
    if (this.waiting.size === 0) this.worker.ref();
    clearTimeout(this.retireTimer);
    const outcome = new Promise<Reply>((resolve, reject) =>
      this.waiting.set(id, { resolve, reject, onBytes }),
    );
    this.worker.postMessage({ ...batch, id });
    return outcome;
  }

  terminate(): Promise<number> {
    return this.worker.terminate();
  }

  private idle(): void {
    if (this.waiting.size > 0) return;
    this.worker.unref();
    if (this.heapGrowth === null || this.heapGrowth <= this.retireBound.heapGrowth) return;
    clearTimeout(this.retireTimer);
    this.retireTimer = setTimeout(() => {
      if (this.waiting.size === 0 && !this.exited) this.events.idleTooLong(this);
    }, this.retireBound.idleMs).unref();
  }
}

/**
 * A fixed set of copy threads shared by every import of the worker process (a provider of the
 * imports queue's module), started when the worker boots (ImportProcessor) or, in a process
 * without one, when first needed, and kept for the next import, but for a thread whose heap a
 * large import grew: it ends once idle, or mid-import once drained (RetireBound), and a new one
 * starts when needed. Idle threads do not hold the process open; the app's shutdown ends them.
 */
export class CopyThreadPool implements OnApplicationShutdown {
  private readonly threads: CopyThread[] = [];
  private wakeups: (() => void)[] = [];
  private closing = false;
  private nextBatchId = 1;
  /** Batches copied since the pool started (tests and diagnostics). */
  batchesRun = 0;
  /** Threads started since the pool was made, replacements included (tests and diagnostics). */
  threadsStarted = 0;

  /**
   * `size` 0 is a pool that never starts a thread: the imports copy on the main thread.
   * `threadEntry` is the threads' code (tests give one that changes files as they are read).
   */
  constructor(
    readonly size: number,
    private readonly threadEntry = COPY_THREAD_ENTRY,
    private readonly retireBound = RETIRE_IDLE_THREADS,
  ) {}

  get threadCount(): number {
    return this.threads.length;
  }

  /** Batches sent to a thread and not answered yet (tests and diagnostics). */
  get inFlight(): number {
    return this.threads.reduce((sum, thread) => sum + thread.load, 0);
  }

  /** Starts every thread now and waits until each has loaded its code. */
  async start(): Promise<void> {
    while (this.threads.length < this.size) this.spawn();
    await Promise.all(this.threads.map((thread) => thread.ready));
  }

  /**
   * Waits for a thread with room, then asks `pick` for its batch synchronously, so the batch
   * goes to that very thread (pick knows which, for keeping a directory on one thread).
   * Resolves null when pick has nothing left, else with pick's tag and the thread's reply;
   * `onBytes` hears of the bytes copied as the thread reports them.
   */
  async runNext<B extends Batch, T>(
    pick: (threadId: number) => { batch: Unnumbered<B>; tag: T } | null,
    onBytes: (bytes: number) => void = () => undefined,
  ): Promise<{ tag: T; reply: ReplyTo<B> } | null> {
    for (;;) {
      const thread = this.freeThread();
      if (thread) {
        const picked = pick(thread.id);
        if (!picked) return null;
        const reply = (await thread.run(this.nextBatchId++, picked.batch, onBytes)) as ReplyTo<B>;
        this.batchesRun += 1;
        return { tag: picked.tag, reply };
      }
      await new Promise<void>((resolve) => this.wakeups.push(resolve));
    }
  }

  /**
   * Ends the threads, each once its batches are answered (an import still running goes on with
   * new threads that end when idle): for tests and an orderly process shutdown.
   */
  async close(): Promise<void> {
    this.closing = true;
    await Promise.all(this.threads.filter((t) => t.load === 0).map((t) => this.end(t)));
  }

  /**
   * Ends the threads with no batch sent (the next batch starts a new one): an S3 import calls it
   * once its reads are over, so that no thread is held through its flush and publish, where the
   * stored manifest, the provenance and the listing come on top of the plan (measured at a
   * million objects: the idle thread was still alive at the peak, 2 s not yet passed).
   */
  endIdle(): void {
    for (const thread of this.threads.filter((t) => t.load === 0)) void this.end(thread);
  }

  /** An app closed and started again in one process (tests) must not accumulate threads. */
  onApplicationShutdown(): Promise<void> {
    return this.close();
  }

  private freeThread(): CopyThread | null {
    let best: CopyThread | null = null;
    let serving = 0;
    for (const thread of this.threads) {
      if (thread.draining) continue;
      serving += 1;
      if (!best || thread.load < best.load) best = thread;
    }
    // A draining thread's replacement starts at once: the pool is one thread over its size
    // until the drained one has answered its last batch.
    if ((!best || best.load > 0) && serving < this.size) best = this.spawn();
    return best && best.load < BATCHES_PER_THREAD ? best : null;
  }

  private spawn(): CopyThread {
    this.threadsStarted += 1;
    const thread = new CopyThread(this.threadEntry, this.retireBound, {
      idleTooLong: (t) => void this.end(t),
      settled: (t) => {
        if ((this.closing || t.draining) && t.load === 0) void this.end(t);
        this.wake();
      },
      exited: (t) => {
        const at = this.threads.indexOf(t);
        if (at >= 0) this.threads.splice(at, 1);
        this.wake();
      },
    });
    this.threads.push(thread);
    return thread;
  }

  private async end(thread: CopyThread): Promise<void> {
    const at = this.threads.indexOf(thread);
    if (at >= 0) this.threads.splice(at, 1);
    await thread.terminate();
  }

  private wake(): void {
    const wakeups = this.wakeups;
    this.wakeups = [];
    for (const wakeup of wakeups) wakeup();
  }
}

/** A file to copy: where it is in the payload, its size, and the inode preflight found. */
export interface CopyFile {
  path: string;
  size: number;
  dev?: number;
  ino?: number;
}

export interface ThreadedCopyRequest {
  stagingId: string;
  md5: boolean;
  /** Where the files' paths are relative to (the payload). */
  sourceRoot: string;
  /**
   * The files, each built when asked for (an array will do): the plan holds them as columns,
   * not as objects.
   */
  files: { readonly length: number; at(position: number): CopyFile | undefined };
  /**
   * StagingArea.localFiles.prepare: directories and bookkeeping on this thread, create there.
   * Absent (and no `encrypted`), the threads only read and hash (a backend without local files):
   * each file's bytes come to `copied`, which stores them.
   */
  prepare?(path: string): string;
  /**
   * Archive mode, instead of `prepare` (StagingArea.encryptedLocalFiles): the threads create
   * each file encrypted, its header and body checksum beside it.
   */
  encrypted?: EncryptedLocalFiles;
  /**
   * Each copied file's result, by its position in `files`; may throw (or reject) to fail the
   * copy. Without `prepare` or `encrypted`, with the file's bytes (valid until the promise
   * settles) to store.
   */
  copied(position: number, result: CopyResult, bytes?: Buffer): void | Promise<void>;
  /** Without `prepare` or `encrypted`: files of one answered batch being stored at once. */
  storeConcurrency?: number;
  /** Bytes copied, as the threads report them (during a large file, not only at its end). */
  bytes(count: number): void;
  /** True once something else (a large file's copy) has failed: no new batch is sent. */
  stopped(): boolean;
  /** Aborted when the import must stop: the threads stop after the chunk they are copying. */
  signal?: AbortSignal;
  /** Files of at least this size are created direct (StagingArea.localFiles.directWriteMinBytes). */
  directWriteMinBytes?: number;
  filesPerBatch?: number;
}

interface Directory {
  positions: Uint32Array;
  next: number;
}

const remaining = (dir: Directory): number => dir.positions.length - dir.next;

/**
 * The positions of `files` by directory, directories in the order of their first file: one
 * array of positions shared by all (4 bytes a file, for a million files). A large file is a
 * group of its own (its path cannot be a directory's name).
 */
function groupByDirectory(files: ThreadedCopyRequest['files']): Directory[] {
  const groups = new Map<string, number>();
  const counts: number[] = [];
  const groupOf = new Uint32Array(files.length);
  for (let position = 0; position < files.length; position++) {
    const file = files.at(position)!;
    const key = file.size >= BATCH_BYTES ? file.path : dirname(file.path);
    let group = groups.get(key);
    if (group === undefined) {
      group = counts.length;
      groups.set(key, group);
      counts.push(0);
    }
    groupOf[position] = group;
    counts[group] += 1;
  }
  const positions = new Uint32Array(files.length);
  const starts: number[] = [];
  let start = 0;
  for (const count of counts) {
    starts.push(start);
    start += count;
  }
  const filled = [...starts];
  for (let position = 0; position < files.length; position++)
    positions[filled[groupOf[position]]++] = position;
  return counts.map((count, group) => ({
    positions: positions.subarray(starts[group], starts[group] + count),
    next: 0,
  }));
}

/**
 * Copies files on the pool's threads, in batches. A directory's files go to one thread
 * as long as there are other directories to hand out, since ext4 takes a directory's lock for
 * each creation in it (with 500 files per directory this made no measurable difference here;
 * it costs nothing); small directories share a batch; a file of BATCH_BYTES or more is a batch
 * of its own. Files count as done per batch, bytes as the threads report them. The first
 * failure stops new batches; this returns (or throws that failure) only once every batch sent
 * is answered, so no write lands after it.
 */
export async function copyFilesOnThreads(
  pool: CopyThreadPool,
  request: ThreadedCopyRequest,
): Promise<void> {
  const perBatch = Math.max(1, request.filesPerBatch ?? DEFAULT_FILES_PER_BATCH);
  const directories = groupByDirectory(request.files);
  let unclaimed = 0;
  const owned = new Map<number, Directory>();
  let failed = false;
  let failure: unknown;
  const stop = new Int32Array(new SharedArrayBuffer(4));
  const raiseStop = (): void => void Atomics.store(stop, 0, 1);
  if (request.signal?.aborted) raiseStop();
  request.signal?.addEventListener('abort', raiseStop, { once: true });

  const directoryFor = (threadId: number): Directory | null => {
    const mine = owned.get(threadId);
    if (mine && remaining(mine) > 0) return mine;
    let next: Directory | null = unclaimed < directories.length ? directories[unclaimed++] : null;
    // Nothing unclaimed left: help with the fullest directory another thread is working on.
    if (!next)
      for (const dir of owned.values())
        if (remaining(dir) > (next ? remaining(next) : 0)) next = dir;
    if (next) owned.set(threadId, next);
    return next;
  };

  const pick = (threadId: number) => {
    if (failed || request.stopped()) return null;
    // Each file built once (its path is decoded from the plan's columns each time it is asked).
    const positions: number[] = [];
    const picked: CopyFile[] = [];
    let bytes = 0;
    let largest = 0;
    while (positions.length < perBatch && bytes < BATCH_BYTES) {
      const dir = directoryFor(threadId);
      if (!dir) break;
      const position = dir.positions[dir.next++];
      const file = request.files.at(position)!;
      positions.push(position);
      picked.push(file);
      bytes += file.size;
      largest = Math.max(largest, file.size);
    }
    if (positions.length === 0) return null;
    const common = {
      sourceRoot: request.sourceRoot,
      md5: request.md5,
      bufferBytes: Math.min(largest + 1, MAX_BUFFER_BYTES),
      stop,
    };
    const identity = (file: CopyFile) =>
      file.ino !== undefined ? { identity: { dev: file.dev!, ino: file.ino } } : {};
    const { prepare, encrypted } = request;
    const direct = (file: CopyFile, minBytes: number | undefined) =>
      file.size >= (minBytes ?? Infinity) ? { direct: true } : {};
    const jobOf = (file: CopyFile): FileCopyJob => {
      if (encrypted) {
        const { body, header, bodySha256 } = encrypted.prepare(file.path);
        return {
          path: file.path,
          target: body,
          companions: { header, bodySha256 },
          ...identity(file),
          ...direct(file, encrypted.directWriteMinBytes),
        };
      }
      return {
        path: file.path,
        target: prepare!(file.path),
        ...identity(file),
        ...direct(file, request.directWriteMinBytes),
      };
    };
    const batch: Omit<CopyBatch, 'id'> | Omit<ReadBatch, 'id'> =
      prepare || encrypted
        ? {
            ...common,
            stagingId: request.stagingId,
            ...(encrypted ? { headerKeys: encrypted.headerKeys } : {}),
            jobs: picked.map(jobOf),
          }
        : {
            ...common,
            read: true,
            jobs: picked.map((file): FileReadJob => ({
              path: file.path,
              size: file.size,
              ...identity(file),
            })),
          };
    return { batch, tag: positions };
  };

  const lane = async (): Promise<void> => {
    for (;;) {
      const answered = await pool.runNext<CopyBatch | ReadBatch, number[]>(pick, (bytes) =>
        request.bytes(bytes),
      );
      if (!answered) return;
      const { reply, tag } = answered;
      if (!('data' in reply)) {
        reply.outcomes.forEach((outcome, k) => {
          if ('error' in outcome) throw reviveError(outcome.error);
          void request.copied(tag[k], outcome);
        });
        continue;
      }
      // Read: the files read before a failure are stored (and recorded) before it is thrown.
      const failedAt = reply.outcomes.findIndex((outcome) => 'error' in outcome);
      const read = failedAt < 0 ? reply.outcomes : reply.outcomes.slice(0, failedAt);
      // A store that fails ends the batch's other stores first (none left in flight).
      let storeFailure: { error: unknown } | undefined;
      await mapLimit(read, request.storeConcurrency ?? 1, async (outcome, k) => {
        if ('error' in outcome || storeFailure) return;
        const bytes = Buffer.from(reply.data, outcome.offset!, outcome.size);
        try {
          await request.copied(tag[k], outcome, bytes);
        } catch (error) {
          storeFailure ??= { error };
        }
      });
      if (storeFailure) throw storeFailure.error;
      if (failedAt >= 0) {
        const failure = reply.outcomes[failedAt];
        if ('error' in failure) throw reviveError(failure.error);
      }
    }
  };
  await Promise.all(
    Array.from({ length: Math.max(1, pool.size) * BATCHES_PER_THREAD }, () =>
      lane().catch((error: unknown) => {
        if (!failed) failure = error;
        failed = true;
      }),
    ),
  ).finally(() => request.signal?.removeEventListener('abort', raiseStop));
  if (failed) throw failure;
}
