// Loaded with `node --require` into each service `npm start` runs (scripts/start.mjs), which
// gives the service a pipe as stdin and keeps its end open while it lives. However npm start ends
// (Ctrl-C, SIGTERM, a crash, a SIGKILL), the kernel closes that end: the service reads end of
// file and stops as on SIGTERM (draining, closing its queue), and exits regardless after
// END_WITH_PARENT_GRACE_MS. Without END_WITH_PARENT=1 (a service run on its own) it does nothing.
'use strict';

// Only the main thread watches: a worker thread (the copy threads) has stdio of its own.
// eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded by `node --require`: CommonJS
const { isMainThread } = require('node:worker_threads');

if (isMainThread && process.env.END_WITH_PARENT === '1' && !process.stdin.isTTY) {
  const grace = Number(process.env.END_WITH_PARENT_GRACE_MS ?? 10000);
  const stop = () => {
    process.stderr.write('npm start has ended: stopping\n');
    setTimeout(() => process.exit(1), grace).unref();
    process.kill(process.pid, 'SIGTERM');
  };
  process.stdin.once('end', stop);
  process.stdin.once('error', stop);
  process.stdin.resume();
  // The watch alone never keeps the process alive.
  process.stdin.unref();
}
