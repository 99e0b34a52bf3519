// The floor of a copy that hashes (issue 61 item 2): the least an import of large files does on
// its threads, every byte read, hashed (SHA-256, Node's OpenSSL, as the import) and written,
// on <threads> worker threads, each taking the next file as it is free, largest first, in
// blocking 4 MiB calls; then one `sync -f` by the caller. No checks, no records, no staging.
// hash-threads.mjs and a bare write each measure one half alone; on a machine of few cores the
// two halves compete for the same CPUs (the kernel's copy into the page cache is CPU too), so
// this is the floor that an import of them both meets.
// <direct> 1: files of 1 MiB or more written past the page cache (O_DIRECT), as the import
// writes them where its probe found that faster; 0: every file through the page cache.
// Usage: node hashing-copy.mjs <threads> <direct 0|1> <source> <target>
/* global WebAssembly */
import { createHash } from 'node:crypto';
import {
  closeSync,
  constants,
  ftruncateSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readSync,
  writeSync,
} from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';

const CHUNK_BYTES = 4 * 1024 * 1024;
/** Files of this size or more go past the page cache in direct mode (the import's threshold). */
const DIRECT_MIN_BYTES = 1024 * 1024;
/** O_DIRECT wants block-aligned lengths; the last block is padded, then the file cut back. */
const BLOCK_BYTES = 4096;

function filesUnder(path, out) {
  const stats = lstatSync(path);
  if (stats.isDirectory()) for (const name of readdirSync(path)) filesUnder(join(path, name), out);
  else if (stats.isFile()) out.push({ path, size: stats.size });
  return out;
}

function copyFile(from, to, size, direct, buffer) {
  const hash = createHash('sha256');
  const source = openSync(from, 'r');
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL;
  const pastCache = direct && size >= DIRECT_MIN_BYTES;
  const target = openSync(to, pastCache ? flags | constants.O_DIRECT : flags, 0o444);
  try {
    let written = 0;
    for (let n; (n = readSync(source, buffer, 0, CHUNK_BYTES, null)) > 0;) {
      hash.update(buffer.subarray(0, n));
      const length = pastCache ? Math.ceil(n / BLOCK_BYTES) * BLOCK_BYTES : n;
      for (let offset = 0; offset < length;)
        offset += writeSync(target, buffer, offset, length - offset);
      written += n;
    }
    if (pastCache && written % BLOCK_BYTES !== 0) ftruncateSync(target, written);
    return hash.digest('hex');
  } finally {
    closeSync(source);
    closeSync(target);
  }
}

if (isMainThread) {
  const [threads, direct, source, target] = process.argv.slice(2);
  const files = filesUnder(source, []).sort((a, b) => b.size - a.size);
  for (const dir of new Set(files.map((f) => dirname(relative(source, f.path)))))
    mkdirSync(join(target, dir), { recursive: true });
  // The index of the next file to copy, shared by the threads.
  const next = new Int32Array(new SharedArrayBuffer(4));
  const url = new URL(import.meta.url);
  const done = Array.from(
    { length: Number(threads) },
    () =>
      new Promise((resolve, reject) => {
        const worker = new Worker(url, {
          workerData: { files, source, target, direct: direct === '1', next },
        });
        worker.on('message', resolve);
        worker.on('error', reject);
      }),
  );
  const copied = (await Promise.all(done)).reduce((sum, n) => sum + n, 0);
  if (copied !== files.length) throw new Error(`copied ${copied} of ${files.length} files`);
} else {
  const { files, source, target, direct, next } = workerData;
  // WebAssembly memory starts on a page boundary, as O_DIRECT needs (Node's own buffers do not).
  const memory = new WebAssembly.Memory({ initial: CHUNK_BYTES / 65536 });
  const buffer = Buffer.from(memory.buffer, 0, CHUNK_BYTES);
  let copied = 0;
  for (let i; (i = Atomics.add(next, 0, 1)) < files.length; copied++) {
    const { path, size } = files[i];
    copyFile(path, join(target, relative(source, path)), size, direct, buffer);
  }
  parentPort.postMessage(copied);
}
