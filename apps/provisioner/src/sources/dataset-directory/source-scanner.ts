import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { startWorkerThread } from '../../common/worker-thread';
import { DatasetReading } from './dataset-directory';
import { JsonDocument } from './json-document';
import {
  DatasetScanRequest,
  DocumentScanRequest,
  ScanAnswer,
  ScanItem,
  ScanRequest,
} from './source-scan';

/** Items per message: a few milliseconds of cloning on this side, one batch of work there. */
const ITEMS_PER_MESSAGE = 500;
/** Messages in flight: the thread starts the next batch while this side reads the last. */
const WINDOW = 2;
/**
 * An idle thread is ended after this long (the next request starts another: 40-70 ms here, most
 * of it the start of any worker thread, against about 1 ms for a request to a running one). A
 * minute keeps it for the requests and imports that come in a row (an import request's presence
 * walk in the API, the next import's resolve in the worker). In the worker it reads a dataset's
 * files when an import starts and then sits idle through the copy: an import whose peak comes
 * within that minute carries its isolate (~10 MiB, well inside the worker's limit); a
 * million-file import's peak comes minutes in, after it has ended.
 */
const IDLE_END_MS = 60_000;

type Answer = ScanAnswer<DatasetReading> | ScanAnswer<JsonDocument> | null;
interface Waiter {
  resolve(answers: Answer[]): void;
  reject(error: Error): void;
}

/**
 * Runs the blocking reads of sources' files (source-scan.ts) on a thread of their own, so that
 * no file-system call on a depositor's files ever runs on the event loop of the API: a hung
 * network mount, a directory of a million entries or a slow disk holds up listings, never
 * health probes or other requests. Blocking calls on that thread (about 1 µs per lstat from
 * the kernel's caches) are several times faster than the same calls as promises through
 * libuv's pool. One thread per process, shared by every source, started when first needed;
 * it does not keep the process alive while idle, is ended once idle for IDLE_END_MS and is
 * started again when needed (or if it dies).
 */
export class SourceScanner {
  private thread: ScanThread | null = null;
  /** Requests being answered (runBatched calls). */
  private busy = 0;
  private idleTimer: NodeJS.Timeout | undefined;

  constructor(private readonly idleEndMs = IDLE_END_MS) {}

  /** Whether the thread is running (tests). */
  get threadRunning(): boolean {
    return this.thread !== null && !this.thread.exited;
  }

  datasets(
    items: ScanItem[],
    options: DatasetScanRequest['options'],
  ): Promise<(ScanAnswer<DatasetReading> | null)[]> {
    return this.runBatched(items, (batch) => ({
      op: 'datasets',
      items: batch,
      options,
    })) as Promise<(ScanAnswer<DatasetReading> | null)[]>;
  }

  documents(
    items: ScanItem[],
    name: string,
    limits: DocumentScanRequest['limits'],
  ): Promise<(ScanAnswer<JsonDocument> | null)[]> {
    return this.runBatched(items, (batch) => ({
      op: 'documents',
      items: batch,
      name,
      limits,
    })) as Promise<(ScanAnswer<JsonDocument> | null)[]>;
  }

  /** Starts the thread now and waits until it has loaded its code (else the first request does). */
  async start(): Promise<void> {
    await this.running().ready;
  }

  /** Ends the thread (tests, shutdown); the next request starts a new one. */
  async close(): Promise<void> {
    clearTimeout(this.idleTimer);
    const thread = this.thread;
    this.thread = null;
    await thread?.terminate();
  }

  private async runBatched(
    items: ScanItem[],
    request: (batch: ScanItem[]) => ScanRequest,
  ): Promise<Answer[]> {
    const answers: Answer[] = new Array<Answer>(items.length);
    this.busy += 1;
    clearTimeout(this.idleTimer);
    let next = 0;
    const lane = async (): Promise<void> => {
      while (next < items.length) {
        const start = next;
        next = Math.min(items.length, next + ITEMS_PER_MESSAGE);
        const batch = await this.running().run(request(items.slice(start, next)));
        for (let i = 0; i < batch.length; i++) answers[start + i] = batch[i];
      }
    };
    try {
      await Promise.all(Array.from({ length: WINDOW }, lane));
    } finally {
      this.busy -= 1;
      if (this.busy === 0) this.endWhenIdle();
    }
    return answers;
  }

  /** Ends the thread unless a request comes within idleEndMs (it is taken off first: none is sent to it). */
  private endWhenIdle(): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      if (this.busy > 0) return;
      const thread = this.thread;
      this.thread = null;
      void thread?.terminate().catch(() => undefined);
    }, this.idleEndMs);
    this.idleTimer.unref();
  }

  private running(): ScanThread {
    if (!this.thread || this.thread.exited) this.thread = new ScanThread();
    return this.thread;
  }
}

/**
 * What the scan thread keeps is small (a manifest's path hashes: 8 bytes a path; one directory's
 * names), but what it reads is garbage by the million strings: without a cap its heap grows
 * with that garbage (V8 collects late below its default limit), and the API pod's memory with
 * it. The cap makes it collect; a reading past it fails that request, and the next one starts a
 * fresh thread.
 */
const SCAN_THREAD_LIMITS = { maxOldGenerationSizeMb: 64, maxYoungGenerationSizeMb: 4 };

/** One scan thread and the requests it has been sent, answered in order. */
class ScanThread {
  exited = false;
  readonly ready: Promise<void>;
  private markReady!: () => void;
  private readonly worker: Worker;
  private readonly waiting = new Map<number, Waiter>();
  private nextId = 1;
  private crash: Error | null = null;

  constructor() {
    let markFailed!: (error: Error) => void;
    this.ready = new Promise<void>((resolve, reject) => {
      this.markReady = resolve;
      markFailed = reject;
    });
    // Awaited by start() only; requests sent before it fail with the thread if it cannot load.
    this.ready.catch(() => undefined);
    this.worker = startWorkerThread(join(__dirname, 'source-scan.thread'), {
      resourceLimits: SCAN_THREAD_LIMITS,
    });
    this.worker.unref();
    this.worker.on('message', (message: ScanReply | 'ready') => {
      if (message === 'ready') {
        this.markReady();
        return;
      }
      const waiter = this.waiting.get(message.id);
      this.waiting.delete(message.id);
      // Busy, the thread keeps the process alive (a script awaiting a listing); idle, it does not.
      if (this.waiting.size === 0) this.worker.unref();
      if (!waiter) return;
      if (message.error)
        waiter.reject(
          Object.assign(new Error(message.error.message), { code: message.error.code }),
        );
      else waiter.resolve(message.answers!);
    });
    this.worker.on('error', (error) => {
      this.crash ??= error;
    });
    this.worker.on('exit', (code) => {
      this.exited = true;
      const error = this.crash ?? new Error(`source-scan thread exited with code ${code}`);
      markFailed(error);
      const waiters = [...this.waiting.values()];
      this.waiting.clear();
      for (const waiter of waiters) waiter.reject(error);
    });
  }

  run(request: ScanRequest): Promise<Answer[]> {
    const id = this.nextId++;
    if (this.waiting.size === 0) this.worker.ref();
    return new Promise<Answer[]>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.worker.postMessage({ id, request });
    });
  }

  async terminate(): Promise<void> {
    await this.worker.terminate();
  }
}

interface ScanReply {
  id: number;
  answers?: Answer[];
  error?: { message: string; code?: string };
}

let shared: SourceScanner | null = null;

/** The process's scanner. */
export function sourceScanner(): SourceScanner {
  shared ??= new SourceScanner();
  return shared;
}

/** Ends the process's scan thread (an app's shutdown; the next request starts a new one). */
export async function closeSourceScanner(): Promise<void> {
  await shared?.close();
}
