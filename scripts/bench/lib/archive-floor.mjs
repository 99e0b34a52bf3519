// Archive mode's floor: the computing it adds to a plain import, alone, on one core, in a fresh
// process (as the worker is one): per file a data key and its header, every plain-text byte
// sealed in 64 KiB segments by the project's Crypt4GH library as built for the worker, and the
// sealed bytes' SHA-256 (the body checksum archive mode records). No file is read or written:
// the plain import does that already, and the two small objects archive mode creates beside each
// body (header, body checksum) are its layout's cost, not counted here.
// Usage: node archive-floor.mjs <built libs/crypt4gh/src/index.js> <sizes.json>; prints CPU ms.
import { createHash, randomBytes, randomFillSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { generateKeyPair, HeaderWriter, KEY_LENGTH, SegmentEncryptor } = require(process.argv[2]);
/** The file sizes of the dataset, in bytes. */
const sizes = JSON.parse(readFileSync(process.argv[3], 'utf8'));

/** The copy's read size: plain-text reaches the encryptor in chunks of this many bytes. */
const CHUNK_BYTES = 1024 * 1024;
const plain = randomFillSync(Buffer.allocUnsafe(CHUNK_BYTES));
const headers = new HeaderWriter([generateKeyPair().publicKey]);
const start = process.cpuUsage();
for (const size of sizes) {
  const dataKey = randomBytes(KEY_LENGTH);
  headers.build({ dataKeys: [dataKey] });
  const encryptor = new SegmentEncryptor(dataKey);
  const body = createHash('sha256');
  for (let left = size; left > 0; left -= CHUNK_BYTES)
    for (const part of encryptor.push(plain.subarray(0, Math.min(left, CHUNK_BYTES))))
      body.update(part);
  for (const part of encryptor.end()) body.update(part);
  body.digest('hex');
}
const used = process.cpuUsage(start);
process.stdout.write(`${(used.user + used.system) / 1000}\n`);
