import { createHash, type Hash } from 'node:crypto';
import { parentPort } from 'node:worker_threads';
import { SegmentEncryptor } from '@app/crypt4gh';
import type { SealReply, SealRequest } from './sealing-threads';

/**
 * Entry of a sealing thread (started by sealing-threads.ts): seals the plain-text of the bodies
 * it is sent, one slot of a body's shared input at a time, into the same slot of its shared
 * output (nonce, cipher-text and MAC of each segment, in order), hashing the sealed bytes for the
 * body checksum. Each slot's cipher-texts are freed as soon as they are copied out
 * (SegmentEncryptor.release), so a body of any size takes no more memory here than a small one.
 */
if (!parentPort) throw new Error('sealing.thread runs only as a worker thread');
const port = parentPort;

interface Body {
  encryptor: SegmentEncryptor;
  hash: Hash;
  input: Buffer;
  output: Buffer;
  slotBytes: number;
  outputSlotBytes: number;
}

const bodies = new Map<number, Body>();

/** Copies `parts` into `output` from `at`, hashing them; returns where it ended. */
function copyOut(parts: readonly Buffer[], body: Body, at: number): number {
  for (const part of parts) {
    body.hash.update(part);
    at += part.copy(body.output, at);
  }
  body.encryptor.release();
  return at;
}

function seal(request: Extract<SealRequest, { op: 'seal' }>): SealReply {
  const body = bodies.get(request.id);
  if (!body) throw new Error(`sealing thread: no body ${request.id}`);
  const start = request.slot * body.outputSlotBytes;
  const plain = body.input.subarray(
    request.slot * body.slotBytes,
    request.slot * body.slotBytes + request.length,
  );
  let at = copyOut(body.encryptor.push(plain), body, start);
  if (!request.final) return { id: request.id, length: at - start };
  at = copyOut(body.encryptor.end(), body, at);
  bodies.delete(request.id);
  return { id: request.id, length: at - start, sha256: body.hash.digest('hex') };
}

port.on('message', (request: SealRequest) => {
  try {
    switch (request.op) {
      case 'open':
        bodies.set(request.id, {
          encryptor: new SegmentEncryptor(Buffer.from(request.dataKey)),
          hash: createHash('sha256'),
          input: Buffer.from(request.input),
          output: Buffer.from(request.output),
          slotBytes: request.slotBytes,
          outputSlotBytes: request.outputSlotBytes,
        });
        return;
      case 'seal':
        port.postMessage(seal(request));
        return;
      case 'close':
        bodies.delete(request.id);
        return;
    }
  } catch (error) {
    bodies.delete(request.id);
    port.postMessage({
      id: request.id,
      error: error instanceof Error ? error.message : String(error),
    } satisfies SealReply);
  }
});
port.postMessage('ready');
