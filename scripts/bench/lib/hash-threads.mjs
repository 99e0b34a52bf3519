// The hash floor of a set of files on the import's threads: the SHA-256 of every byte (Node's
// OpenSSL, the import's) on <threads> worker threads, each taking the next file as it is free,
// largest first, as the copy threads take an import's files, read in 1 MiB blocking reads and
// written nowhere. No import that hashes every byte on that many threads can copy the set faster.
// Usage: node hash-threads.mjs <threads> <file or directory>...
import { createHash } from 'node:crypto';
import { closeSync, lstatSync, openSync, readdirSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';

const CHUNK_BYTES = 1024 * 1024;

function hashFile(path, buffer) {
  const fd = openSync(path, 'r');
  try {
    const hash = createHash('sha256');
    for (let n; (n = readSync(fd, buffer, 0, CHUNK_BYTES, null)) > 0;)
      hash.update(buffer.subarray(0, n));
    return hash.digest('hex');
  } finally {
    closeSync(fd);
  }
}

function filesUnder(path, out) {
  const stats = lstatSync(path);
  if (stats.isDirectory()) for (const name of readdirSync(path)) filesUnder(join(path, name), out);
  else if (stats.isFile()) out.push({ path, size: stats.size });
  return out;
}

if (isMainThread) {
  const [threads, ...paths] = process.argv.slice(2);
  const files = paths.flatMap((path) => filesUnder(path, [])).sort((a, b) => b.size - a.size);
  // The index of the next file to hash, shared by the threads.
  const next = new Int32Array(new SharedArrayBuffer(4));
  const url = new URL(import.meta.url);
  const done = Array.from(
    { length: Number(threads) },
    () =>
      new Promise((resolve, reject) => {
        const worker = new Worker(url, { workerData: { files: files.map((f) => f.path), next } });
        worker.on('message', resolve);
        worker.on('error', reject);
      }),
  );
  const hashed = (await Promise.all(done)).reduce((sum, n) => sum + n, 0);
  if (hashed !== files.length) throw new Error(`hashed ${hashed} of ${files.length} files`);
  process.stdout.write(`${hashed} files\n`);
} else {
  const { files, next } = workerData;
  const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
  let hashed = 0;
  for (let i; (i = Atomics.add(next, 0, 1)) < files.length; hashed++) hashFile(files[i], buffer);
  parentPort.postMessage(hashed);
}
