// The hash floor for one large file: its SHA-256 (Node's OpenSSL, the import's), the next 1 MiB
// chunk read on libuv's pool while this one is hashed, as the import's copy threads do, and
// written nowhere. A file's SHA-256 is one sequential pass on one core, so no import that hashes
// every byte can copy one file faster than this.
// Usage: node hash-file.mjs <file>
import { createHash } from 'node:crypto';
import { closeSync, openSync, read } from 'node:fs';

const CHUNK_BYTES = 1024 * 1024;
const fd = openSync(process.argv[2], 'r');
const buffers = [Buffer.allocUnsafe(CHUNK_BYTES), Buffer.allocUnsafe(CHUNK_BYTES)];
const readInto = (buffer) =>
  new Promise((resolve, reject) =>
    read(fd, buffer, 0, CHUNK_BYTES, null, (error, n) =>
      error ? reject(error) : resolve(buffer.subarray(0, n)),
    ),
  );
const hash = createHash('sha256');
let next = readInto(buffers[0]);
for (let k = 1; ; k++) {
  const chunk = await next;
  if (chunk.length === 0) break;
  next = readInto(buffers[k % 2]);
  hash.update(chunk);
}
closeSync(fd);
process.stdout.write(`${hash.digest('hex')}\n`);
