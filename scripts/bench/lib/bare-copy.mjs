// The floor for small files: the least any copy on this machine's cores does per file, with as
// many threads as the import copies on. Each thread opens, reads, creates (exclusively, like the
// import), writes and closes its files in blocking calls, a directory per thread at a time, with
// no hashing, no checks, no records and no preflight walk: what is left of an import's copy when
// everything it adds to `cp` is taken away. Its walk of the tree (one recursive readdir) is in
// the figure, as `cp -r`'s own walk is in cp's. Each directory is made when its thread reaches it
// (the import's main thread makes each as it hands out the directory's first file; `cp -r` too):
// ext4 places a new directory in the first group, from its parent's on, with more free inodes
// than most, and its files in the directory's group, so directories made one by one spread the
// files over the groups the way the import's are spread. Made all at once before the copy, they
// all sit in one group, and once it is full each directory's files go to a group picked by a
// hash of its inode, anywhere on the disk: away from the groups a mass deletion just freed,
// whose recently deleted inodes the allocator of this journal-less ext4 reads through on every
// creation (docs/decisions/bare-copy-places-files-as-the-import.md).
// <hash> `sha256`: each file's bytes also go through SHA-256 (Node's OpenSSL, one hash object per
// file, as the import hashes every file it copies): the least the import's threads do on the
// bytes, with nothing else added (no walk's lstat, no checks by descriptor, no records).
// Usage: node bare-copy.mjs <source> <target> <threads> [sha256]
import { createHash } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readdirSync, readSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
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
  mkdirSync(target, { recursive: true });
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
  const made = new Set();
  for (const file of files) {
    const dir = dirname(join(target, file));
    if (!made.has(dir)) {
      mkdirSync(dir, { recursive: true });
      made.add(dir);
    }
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
