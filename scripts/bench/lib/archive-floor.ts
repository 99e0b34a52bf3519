import { createHash, randomBytes, randomFillSync } from 'node:crypto';
import { generateKeyPair, HeaderWriter, KEY_LENGTH, SegmentEncryptor } from '@app/crypt4gh';
import type { FileSpec } from '../data/import-data';

/** The copy's read size: plain-text reaches the encryptor in chunks of this many bytes. */
const CHUNK_BYTES = 1024 * 1024;

/**
 * The computing archive mode adds to a plain import of `files`, alone, on one core, in this
 * process: per file a data key and its header, every plain-text byte sealed in 64 KiB segments
 * (libs/crypt4gh), the sealed bytes hashed (the body's SHA-256 that archive mode records). No
 * file is read or written: the two small objects archive mode creates beside each body (header,
 * body checksum) are the layout's cost, not counted here, since creating files right after a
 * deletion on this disk takes several times longer than on a settled one. Returns CPU ms (user +
 * system of this process).
 */
export function archiveExtraWorkMs(files: readonly FileSpec[]): number {
  const plain = randomFillSync(Buffer.allocUnsafe(CHUNK_BYTES));
  const headers = new HeaderWriter([generateKeyPair().publicKey]);
  const start = process.cpuUsage();
  for (const file of files) {
    const dataKey = randomBytes(KEY_LENGTH);
    headers.build({ dataKeys: [dataKey] });
    const encryptor = new SegmentEncryptor(dataKey);
    const body = createHash('sha256');
    for (let left = file.size; left > 0; left -= CHUNK_BYTES)
      for (const part of encryptor.push(plain.subarray(0, Math.min(left, CHUNK_BYTES))))
        body.update(part);
    for (const part of encryptor.end()) body.update(part);
    body.digest('hex');
  }
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}
