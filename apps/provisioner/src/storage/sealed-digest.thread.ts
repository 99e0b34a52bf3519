import { createHash, type Hash } from 'node:crypto';
import { parentPort } from 'node:worker_threads';
import { DIGEST_FAILED, DIGEST_READY, type DigestRequest } from './sealed-digest';

/**
 * Entry of a sealed-bytes digest thread (started by sealed-digest.ts, one per copy thread that
 * writes a large archive body): hashes, in the order they are handed over, the regions of a
 * body's shared gathering memory that its copy thread has filled with sealed bytes, and answers
 * through the body's shared control words (Atomics), which the copy thread waits on before it
 * fills a region again and for the body checksum at its commit.
 */
if (!parentPort) throw new Error('sealed-digest.thread runs only as a worker thread');
const port = parentPort;

interface Body {
  hash: Hash;
  bytes: Buffer;
  /** [0] regions hashed, [1] DIGEST_READY or DIGEST_FAILED once the body is done. */
  control: Int32Array;
  digest: Uint8Array;
}

const bodies = new Map<number, Body>();

function answer(control: Int32Array, index: number, value: number): void {
  Atomics.store(control, index, value);
  Atomics.notify(control, index);
}

port.on('message', (request: DigestRequest) => {
  if (request.op === 'open') {
    const control = new Int32Array(request.control, 0, 2);
    bodies.set(request.id, {
      hash: createHash('sha256'),
      bytes: Buffer.from(request.memory),
      control,
      digest: new Uint8Array(request.control, 8, 32),
    });
    return;
  }
  const body = bodies.get(request.id);
  // A body closed (aborted) before its last regions came: nothing waits for them.
  if (!body) return;
  if (request.op === 'close') {
    bodies.delete(request.id);
    return;
  }
  try {
    body.hash.update(body.bytes.subarray(request.offset, request.offset + request.length));
    if (request.op === 'update') {
      answer(body.control, 0, Atomics.load(body.control, 0) + 1);
      return;
    }
    bodies.delete(request.id);
    body.digest.set(body.hash.digest());
    answer(body.control, 1, DIGEST_READY);
  } catch {
    bodies.delete(request.id);
    answer(body.control, 1, DIGEST_FAILED);
    // A copy thread waiting for a region wakes too, and finds the failure.
    Atomics.notify(body.control, 0);
  }
});
