import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import { startWorkerThread } from '../common/worker-thread';

/** The digest thread's code, without extension (see startWorkerThread). */
const DIGEST_THREAD_ENTRY = join(__dirname, 'sealed-digest.thread');

/** Control word 1 once the body's digest is in its control memory. */
export const DIGEST_READY = 1;
/** Control word 1 when the digest thread failed for the body (or ended). */
export const DIGEST_FAILED = -1;

/**
 * How long a copy thread waits for the digest thread before failing the body: hashing a region
 * takes milliseconds, so only a thread that is gone (it ended, out of memory) leaves it waiting.
 */
const ANSWER_TIMEOUT_MS = 60_000;

/** What a digest thread is sent: a body's shared memory, then regions of it, in order. */
export type DigestRequest =
  | { op: 'open'; id: number; memory: SharedArrayBuffer; control: SharedArrayBuffer }
  | { op: 'update' | 'final'; id: number; offset: number; length: number }
  | { op: 'close'; id: number };

/** This thread's digest thread, started for its first large archive body, and its bodies' controls. */
let thread: Worker | null = null;
const open = new Map<number, Int32Array>();
let nextId = 1;

function digestThread(): Worker {
  if (thread) return thread;
  const started = startWorkerThread(DIGEST_THREAD_ENTRY, {
    resourceLimits: { maxYoungGenerationSizeMb: 1 },
  });
  // Never what keeps this thread (or the process) alive: a copy thread ends it with itself.
  started.unref();
  started.on('error', () => undefined);
  started.on('exit', () => {
    if (thread === started) thread = null;
    // Whoever waits for it finds the failure (a waiter gives up at its time-out otherwise).
    for (const control of open.values()) {
      Atomics.store(control, 1, DIGEST_FAILED);
      Atomics.notify(control, 0);
      Atomics.notify(control, 1);
    }
    open.clear();
  });
  thread = started;
  return started;
}

/**
 * The SHA-256 of a large archive body's sealed bytes (its body checksum), computed on a thread of
 * its own while the copy thread reads, hashes and seals on (OverlappedSealedBody): the copy thread
 * gathers sealed bytes into regions of `memory` (shared) and hands each full region over in order;
 * before filling a region again it waits until the thread has hashed it (waitHashed), which the
 * region's write to disk, longer, has almost always outlasted. A body's work was one sequential
 * chain on one copy thread (read, plain-text SHA-256, sealing, sealed SHA-256, write); this takes
 * the last hash off it (docs/decisions/crypt4gh-sealed-digest-thread.md).
 */
export class SealedDigest {
  private readonly id = nextId++;
  private readonly thread: Worker;
  /** [0] regions hashed, [1] DIGEST_READY or DIGEST_FAILED. */
  private readonly control: Int32Array;
  private readonly digest: Uint8Array;
  private handed = 0;
  private closed = false;

  constructor(memory: SharedArrayBuffer) {
    const shared = new SharedArrayBuffer(8 + 32);
    this.control = new Int32Array(shared, 0, 2);
    this.digest = new Uint8Array(shared, 8, 32);
    this.thread = digestThread();
    open.set(this.id, this.control);
    this.thread.postMessage({ op: 'open', id: this.id, memory, control: shared } as DigestRequest);
  }

  /** Hands bytes `offset`..`offset + length` of the memory over: its number, for waitHashed. */
  update(offset: number, length: number): number {
    this.thread.postMessage({ op: 'update', id: this.id, offset, length } as DigestRequest);
    return ++this.handed;
  }

  /** Blocks until the first `count` regions handed over are hashed (free to be filled again). */
  waitHashed(count: number): void {
    for (;;) {
      const hashed = Atomics.load(this.control, 0);
      if (hashed >= count) return;
      this.checkAlive();
      if (Atomics.wait(this.control, 0, hashed, ANSWER_TIMEOUT_MS) === 'timed-out')
        throw new Error('the sealed-bytes digest thread did not answer');
    }
  }

  /** Hands the last bytes over (none: length 0); the digest comes from result(). */
  finish(offset: number, length: number): void {
    this.thread.postMessage({ op: 'final', id: this.id, offset, length } as DigestRequest);
  }

  /** The SHA-256 (hex) of every byte handed over, once finish() was called. */
  result(): string {
    for (;;) {
      const state = Atomics.load(this.control, 1);
      if (state === DIGEST_READY) {
        this.forget();
        return Buffer.from(this.digest).toString('hex');
      }
      this.checkAlive();
      if (Atomics.wait(this.control, 1, state, ANSWER_TIMEOUT_MS) === 'timed-out')
        throw new Error('the sealed-bytes digest thread did not answer');
    }
  }

  /** The body is abandoned: the thread forgets it (regions still queued are skipped). */
  close(): void {
    if (this.closed) return;
    this.forget();
    this.thread.postMessage({ op: 'close', id: this.id } as DigestRequest);
  }

  private checkAlive(): void {
    if (Atomics.load(this.control, 1) === DIGEST_FAILED) {
      this.forget();
      throw new Error('the sealed-bytes digest thread failed');
    }
  }

  private forget(): void {
    this.closed = true;
    open.delete(this.id);
  }
}
