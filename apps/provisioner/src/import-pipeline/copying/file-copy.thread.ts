import { getHeapStatistics } from 'node:v8';
import { parentPort } from 'node:worker_threads';
import { allocAligned, roundUpToBlock } from '../../storage/local-objects';
import {
  runCopyBatch,
  runWalkBatch,
  CopyBatch,
  CopyBatchProgress,
  CopyBatchReply,
  ThreadReply,
  WalkBatch,
} from './copy-batch';
import { DIRECT_WRITE_BUFFERS } from './hashing-copy';
import { ReadBatch, runReadBatch } from './read-batch';
import { transferablesOf } from './payload-walker';

/** A large file's progress is posted every this many bytes; the rest comes with the reply. */
const PROGRESS_BYTES = 16 * 1024 * 1024;

/**
 * Entry of a copy thread (started by copy-thread-pool.ts): copies the batches it is
 * sent, reads the small files of an S3 import, or walks the payload directories it is sent, one
 * batch at a time, in blocking calls (a file written direct also waits for its writes, see
 * copyFileWithHashesOverlapped), and answers each with its outcomes.
 */
if (!parentPort) throw new Error('file-copy.thread runs only as a worker thread');
const port = parentPort;
// One read buffer per thread, grown to the largest batch's need; aligned for direct writes.
let buffer = allocAligned(0);
// The others a file written direct takes in turn, made at the first one (a thread of small
// files has none).
let spares: Buffer[] | null = null;
const spareBuffers = (): Buffer[] => {
  if (spares?.[0].length !== buffer.length)
    spares = Array.from({ length: DIRECT_WRITE_BUFFERS - 1 }, () => allocAligned(buffer.length));
  return spares;
};

const growBuffer = (bytes: number): void => {
  if (buffer.length < bytes) buffer = allocAligned(roundUpToBlock(bytes));
};

async function copy(batch: CopyBatch): Promise<CopyBatchReply> {
  growBuffer(batch.bufferBytes);
  let unreported = 0;
  const outcomes = await runCopyBatch(batch, { buffer, spares: spareBuffers }, (bytes) => {
    unreported += bytes;
    if (unreported < PROGRESS_BYTES) return;
    const progress: CopyBatchProgress = { id: batch.id, progress: unreported };
    port.postMessage(progress);
    unreported = 0;
  });
  return { id: batch.id, outcomes, bytes: unreported };
}

// One batch at a time, in the order sent: the pool queues two per thread, and the second
// arrives while the first waits for a direct write; they share the buffers. An unexpected
// failure (no memory for a buffer) stays unhandled and ends the thread, which fails its batches.
let previous = Promise.resolve();
// The heap once the code is loaded (under ts-node in tests, a compiler's worth more than built).
const loadedHeap = getHeapStatistics().total_heap_size;
const answer = (reply: ThreadReply, transfer?: ArrayBuffer[]): void => {
  reply.heapGrowth = getHeapStatistics().total_heap_size - loadedHeap;
  port.postMessage(reply, transfer);
};
port.on('message', (batch: CopyBatch | WalkBatch | ReadBatch) => {
  previous = previous.then(async () => {
    if ('walk' in batch) {
      const reply = runWalkBatch(batch);
      return answer(reply, 'error' in reply.parts ? [] : transferablesOf(reply.parts));
    }
    if (!('read' in batch)) return answer(await copy(batch));
    growBuffer(batch.bufferBytes);
    const reply = runReadBatch(batch, buffer);
    answer(reply, [reply.data]);
  });
});
port.postMessage('ready');
