// The floor for small files: the least any copy on this machine's cores does per file, with as
// many threads as the import copies on. Each thread opens, reads, creates (exclusively, like the
// import), writes and closes its files in blocking calls, a directory per thread at a time, with
// no hashing, no checks, no records and no preflight walk: what is left of an import's copy when
// everything it adds to `cp` is taken away. Its walk of the tree (one recursive readdir) is in
// the figure, as `cp -r`'s own walk is in cp's.
// <hash> `sha256`: each file's bytes also go through SHA-256 (Node's OpenSSL, one hash object per
// file, as the import hashes every file it copies): the least the import's threads do on the
// bytes, with nothing else added (no walk's lstat, no checks by descriptor, no records).
// Usage: node bare-copy.mjs <source> <target> <threads> [sha256]
import { createHash } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readdirSync, readSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';

const BUFFER_BYTES = 1024 * 1024;

if (isMainThread) {
  const [source, target, threadArg, hash] = process.argv.slice(2);
  if (hash !== undefined && hash !== 'sha256') throw new Error(`unknown hash ${hash}`);
  const threads = Math.max(1, Number(threadArg) || 1);
  // Files grouped by directory (ext4 takes a directory's lock for each creation in it).
  const directories = new Map();
  for (const entry of readdirSync(source, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const dir = entry.parentPath ?? entry.path;
    if (!directories.has(dir)) directories.set(dir, []);
    directories.get(dir).push(join(dir, entry.name).slice(source.length + 1));
  }
  const shares = Array.from({ length: threads }, () => []);
  [...directories.values()].forEach((files, i) => shares[i % threads].push(...files));
  for (const dir of directories.keys())
    mkdirSync(join(target, dir.slice(source.length)), { recursive: true });
  let running = threads;
  for (const files of shares) {
    const worker = new Worker(new URL(import.meta.url), {
      workerData: { source, target, files, hash },
    });
    worker.on('error', (error) => {
      console.error(error);
      process.exit(1);
    });
    worker.on('exit', () => {
      running -= 1;
      if (running === 0) process.exit(0);
    });
  }
} else {
  const { source, target, files, hash } = workerData;
  const buffer = Buffer.allocUnsafe(BUFFER_BYTES);
  for (const file of files) {
    const from = openSync(join(source, file), 'r');
    const to = openSync(join(target, file), 'wx', 0o444);
    const digest = hash ? createHash(hash) : null;
    for (;;) {
      const n = readSync(from, buffer, 0, BUFFER_BYTES, null);
      if (n === 0) break;
      digest?.update(buffer.subarray(0, n));
      for (let offset = 0; offset < n;) offset += writeSync(to, buffer, offset, n - offset);
      if (n < BUFFER_BYTES) break;
    }
    digest?.digest('hex');
    closeSync(from);
    closeSync(to);
  }
  parentPort?.close();
}
