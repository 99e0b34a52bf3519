import { parentPort } from 'node:worker_threads';
import { allocAligned, roundUpToBlock } from '../storage/local-objects';
import {
  runCopyBatch,
  runWalkBatch,
  CopyBatch,
  CopyBatchProgress,
  CopyBatchReply,
  WalkBatch,
} from './copy-batch';
import { ReadBatch, runReadBatch } from './read-batch';

/** A large file's progress is posted every this many bytes; the rest comes with the reply. */
const PROGRESS_BYTES = 16 * 1024 * 1024;

/**
 * Entry of a copy thread (started by copy-thread-pool.ts): copies the batches it is
 * sent, reads the small files of an S3 import, or walks the payload directories it is sent, one
 * batch at a time, in blocking calls, and answers each with its outcomes.
 */
if (!parentPort) throw new Error('file-copy.thread runs only as a worker thread');
const port = parentPort;
// One read buffer per thread, grown to the largest batch's need; aligned for direct writes.
let buffer = allocAligned(0);

port.on('message', (batch: CopyBatch | WalkBatch | ReadBatch) => {
  if ('walk' in batch) {
    port.postMessage(runWalkBatch(batch));
    return;
  }
  if (buffer.length < batch.bufferBytes) buffer = allocAligned(roundUpToBlock(batch.bufferBytes));
  if ('read' in batch) {
    const reply = runReadBatch(batch, buffer);
    port.postMessage(reply, [reply.data]);
    return;
  }
  let unreported = 0;
  const outcomes = runCopyBatch(batch, buffer, (bytes) => {
    unreported += bytes;
    if (unreported < PROGRESS_BYTES) return;
    const progress: CopyBatchProgress = { id: batch.id, progress: unreported };
    port.postMessage(progress);
    unreported = 0;
  });
  const reply: CopyBatchReply = { id: batch.id, outcomes, bytes: unreported };
  port.postMessage(reply);
});
port.postMessage('ready');
