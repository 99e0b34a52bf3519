import { parentPort } from 'node:worker_threads';
import { runSmallFileBatch, SmallFileBatch, SmallFileBatchReply } from './small-file-batch';

/**
 * Entry of a small-file copy thread (started by small-file-pool.ts): copies the batches it is
 * sent, one at a time, in blocking calls, and answers each with its outcomes.
 */
if (!parentPort) throw new Error('small-file-copy.thread runs only as a worker thread');
const port = parentPort;
// One read buffer per thread, grown to the largest batch's need.
let buffer = Buffer.allocUnsafe(0);

port.on('message', (batch: SmallFileBatch) => {
  if (buffer.length < batch.bufferBytes) buffer = Buffer.allocUnsafe(batch.bufferBytes);
  const reply: SmallFileBatchReply = { id: batch.id, outcomes: runSmallFileBatch(batch, buffer) };
  port.postMessage(reply);
});
port.postMessage('ready');
