import { join } from 'node:path';
import type { OnApplicationShutdown } from '@nestjs/common';
import type { Worker } from 'node:worker_threads';
import { CIPHER_SEGMENT_SIZE, SEGMENT_SIZE } from '@app/crypt4gh';
import { startWorkerThread } from '../common/worker-thread';

/** The sealing threads' code, without extension (see startWorkerThread). */
export const SEALING_THREAD_ENTRY = join(__dirname, 'sealing.thread');

/** Plain-text handed to a thread at a time: whole segments, so only a body's last is partial. */
export const SEAL_SLOT_BYTES = 16 * SEGMENT_SIZE;
/** What a slot's plain-text can seal to: its segments, and one held over (never, with whole segments). */
const SEALED_SLOT_BYTES = (SEAL_SLOT_BYTES / SEGMENT_SIZE + 1) * CIPHER_SEGMENT_SIZE;
/** A body's slots: one filled (or uploaded) here while the other is sealed there. */
const SLOTS = 2;

/** What a sealing thread is sent. */
export type SealRequest =
  | {
      op: 'open';
      id: number;
      dataKey: Uint8Array;
      input: SharedArrayBuffer;
      output: SharedArrayBuffer;
      slotBytes: number;
      outputSlotBytes: number;
    }
  | { op: 'seal'; id: number; slot: number; length: number; final: boolean }
  | { op: 'close'; id: number };

/** A thread's answer to a `seal`: the sealed bytes in the slot's output, the body's SHA-256 at its end. */
export type SealReply =
  | { id: number; length: number; sha256?: string; error?: undefined }
  | { id: number; error: string };

/** A body's shared memory: SLOTS input slots of plain-text and SLOTS output slots of sealed bytes. */
interface SlotPair {
  input: SharedArrayBuffer;
  output: SharedArrayBuffer;
  inputBytes: Buffer;
  outputBytes: Buffer;
}

class SealingThread {
  readonly ready: Promise<void>;
  private readonly worker: Worker;
  private readonly waiting = new Map<
    number,
    { resolve: (reply: SealReply) => void; reject: (error: Error) => void }[]
  >();
  /** Bodies open on this thread. */
  bodies = 0;
  private failure: Error | null = null;

  constructor(entry: string, exited: (thread: SealingThread) => void) {
    let markReady!: () => void;
    let markFailed!: (error: Error) => void;
    this.ready = new Promise<void>((resolve, reject) => {
      markReady = resolve;
      markFailed = reject;
    });
    this.ready.catch(() => undefined);
    this.worker = startWorkerThread(entry, { resourceLimits: { maxYoungGenerationSizeMb: 1 } });
    this.worker.unref();
    this.worker.on('message', (message: SealReply | 'ready') => {
      if (message === 'ready') return markReady();
      const queue = this.waiting.get(message.id);
      const waiter = queue?.shift();
      if (queue?.length === 0) this.waiting.delete(message.id);
      if (this.waiting.size === 0) this.worker.unref();
      waiter?.resolve(message);
    });
    this.worker.on('error', (error) => {
      this.failure ??= error;
    });
    this.worker.on('exit', (code) => {
      const error = this.failure ?? new Error(`sealing thread exited with code ${code}`);
      this.failure = error;
      markFailed(error);
      const waiters = [...this.waiting.values()].flat();
      this.waiting.clear();
      for (const waiter of waiters) waiter.reject(error);
      exited(this);
    });
  }

  post(request: SealRequest): void {
    if (this.failure) throw this.failure;
    this.worker.postMessage(request);
  }

  /** Sends a `seal` and resolves with its answer (answers come in the order asked, per body). */
  seal(request: Extract<SealRequest, { op: 'seal' }>): Promise<SealReply> {
    if (this.failure) return Promise.reject(this.failure);
    const answered = new Promise<SealReply>((resolve, reject) => {
      const queue = this.waiting.get(request.id);
      if (queue) queue.push({ resolve, reject });
      else this.waiting.set(request.id, [{ resolve, reject }]);
    });
    this.worker.ref();
    this.worker.postMessage(request);
    return answered;
  }

  terminate(): Promise<number> {
    return this.worker.terminate();
  }
}

/** Where a body's sealed bytes go, in order: the object the body is stored as. */
export interface SealedSink {
  write(sealed: Buffer): Promise<void>;
}

/** A body sealed on a thread (SealingThreads.open): plain-text in, sealed bytes to the sink. */
export interface ThreadSealedBody {
  /** Takes the plain-text (copied before this returns or, when a slot is full, before it resolves). */
  write(chunk: Uint8Array): Promise<void>;
  /** Seals the rest, writes it, and answers the SHA-256 of every sealed byte written. */
  end(): Promise<string>;
  /** Stops: nothing more is written to the sink, the body's memory goes back. */
  abort(): Promise<void>;
}

let bodyIds = 0;

/**
 * Worker threads that seal large bodies for archive mode where the main thread would otherwise
 * (S3 storage, whose large files stream through the main thread's lanes; with no copy threads,
 * IMPORT_COPY_THREADS=0, there are none either): the main thread copies plain-text into a body's shared slot
 * and uploads the sealed bytes the thread put in the matching output slot, while the thread seals
 * the next. Node's cipher makes a new buffer for each 64 KiB segment, which V8 frees only once
 * tens of megabytes of them have built up; on a thread they are freed as soon as copied out
 * (SegmentEncryptor.release), which on a main thread measured slower
 * (docs/decisions/crypt4gh-archive-speed.md). Up to `size` threads, started when first needed, a
 * body given to the one with the fewest; idle threads do not hold the process open. A body's
 * shared memory (4.1 MiB: two slots each way) is reused by the next; `size` of them are kept.
 */
export class SealingThreads implements OnApplicationShutdown {
  private readonly threads: SealingThread[] = [];
  private readonly spare: SlotPair[] = [];
  private closed = false;

  constructor(
    readonly size: number,
    private readonly entry = SEALING_THREAD_ENTRY,
  ) {}

  /** A body of this data key, sealed on a thread, its sealed bytes written to `sink` in order. */
  async open(dataKey: Buffer, sink: SealedSink): Promise<ThreadSealedBody> {
    if (this.closed) throw new Error('sealing threads closed');
    const thread = this.pick();
    await thread.ready;
    const id = ++bodyIds;
    const slots = this.spare.pop() ?? newSlotPair();
    thread.bodies += 1;
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      thread.bodies -= 1;
    };
    try {
      thread.post({
        op: 'open',
        id,
        // Its own 32 bytes: a view would send the whole block of random bytes it was drawn from.
        dataKey: Uint8Array.from(dataKey),
        input: slots.input,
        output: slots.output,
        slotBytes: SEAL_SLOT_BYTES,
        outputSlotBytes: SEALED_SLOT_BYTES,
      });
    } catch (error) {
      finish();
      this.giveBack(slots);
      throw error;
    }
    let slot = 0;
    let filled = 0;
    /** The slot handed to the thread last and its answer, its sealed bytes not yet written. */
    let sealing: { slot: number; reply: Promise<SealReply> } | null = null;
    let failed: unknown = null;

    /** Writes a slot's sealed bytes to the sink once the thread has answered. */
    const writeOut = async (sealed: { slot: number; reply: Promise<SealReply> }) => {
      const answer = await sealed.reply;
      if (answer.error !== undefined) throw new Error(`sealing a body: ${answer.error}`);
      const at = sealed.slot * SEALED_SLOT_BYTES;
      if (answer.length > 0) await sink.write(slots.outputBytes.subarray(at, at + answer.length));
      return answer;
    };
    /** Hands the filled slot to the thread, then writes the one sealed before it (and, at the end, this one). */
    const submit = async (final: boolean) => {
      const previous = sealing;
      sealing = { slot, reply: thread.seal({ op: 'seal', id, slot, length: filled, final }) };
      slot = (slot + 1) % SLOTS;
      filled = 0;
      if (previous) await writeOut(previous);
      if (!final) return undefined;
      const last = sealing;
      sealing = null;
      return writeOut(last);
    };
    const guarded = async <T>(work: () => Promise<T>): Promise<T> => {
      if (failed) throw failed;
      try {
        return await work();
      } catch (error) {
        failed ??= error;
        throw error;
      }
    };
    /** The body's slots go back once the thread no longer reads or writes them. */
    const release = async () => {
      const pending = sealing;
      sealing = null;
      if (pending) await pending.reply.catch(() => undefined);
      if (done) return;
      finish();
      this.giveBack(slots);
    };
    return {
      write: (chunk) =>
        guarded(async () => {
          let offset = 0;
          while (offset < chunk.length) {
            const n = Math.min(chunk.length - offset, SEAL_SLOT_BYTES - filled);
            slots.inputBytes.set(
              chunk.subarray(offset, offset + n),
              slot * SEAL_SLOT_BYTES + filled,
            );
            filled += n;
            offset += n;
            if (filled === SEAL_SLOT_BYTES) await submit(false);
          }
        }),
      end: () =>
        guarded(async () => {
          try {
            const answer = await submit(true);
            return answer!.sha256!;
          } finally {
            await release();
          }
        }),
      abort: async () => {
        failed ??= new Error('body aborted');
        if (done) return;
        await release();
        try {
          // The thread forgets the body (it may have ended it already, on an error).
          thread.post({ op: 'close', id });
        } catch {
          // The thread is gone, and the body with it.
        }
      },
    };
  }

  /** Ends every thread (the app's shutdown); bodies being sealed fail. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.threads.splice(0).map((thread) => thread.terminate()));
    this.spare.length = 0;
  }

  onApplicationShutdown(): Promise<void> {
    return this.close();
  }

  /** Threads running (tests and diagnostics). */
  get threadCount(): number {
    return this.threads.length;
  }

  private pick(): SealingThread {
    let best: SealingThread | undefined;
    for (const thread of this.threads) if (!best || thread.bodies < best.bodies) best = thread;
    if (best && (best.bodies === 0 || this.threads.length >= this.size)) return best;
    const thread = new SealingThread(this.entry, (gone) => {
      const at = this.threads.indexOf(gone);
      if (at >= 0) this.threads.splice(at, 1);
    });
    this.threads.push(thread);
    return thread;
  }

  private giveBack(slots: SlotPair): void {
    if (this.spare.length < Math.max(1, this.size)) this.spare.push(slots);
  }
}

function newSlotPair(): SlotPair {
  const input = new SharedArrayBuffer(SEAL_SLOT_BYTES * SLOTS);
  const output = new SharedArrayBuffer(SEALED_SLOT_BYTES * SLOTS);
  return { input, output, inputBytes: Buffer.from(input), outputBytes: Buffer.from(output) };
}
