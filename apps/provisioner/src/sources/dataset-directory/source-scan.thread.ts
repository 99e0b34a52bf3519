import { parentPort } from 'node:worker_threads';
import { runScan, ScanRequest } from './source-scan';

/**
 * Entry of the source-scan thread (started by SourceScanner): runs each request's blocking
 * reads and answers it; a request that throws answers with the error's message.
 */
if (!parentPort) throw new Error('source-scan.thread runs only as a worker thread');
const port = parentPort;

port.on('message', ({ id, request }: { id: number; request: ScanRequest }) => {
  try {
    port.postMessage({ id, answers: runScan(request) });
  } catch (error) {
    const e = error as NodeJS.ErrnoException;
    port.postMessage({ id, error: { message: e.message, code: e.code } });
  }
});
port.postMessage('ready');
