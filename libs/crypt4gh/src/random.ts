import { randomBytes } from 'node:crypto';
import { KEY_LENGTH } from './format';

/** Bytes drawn from the CSPRNG at once, handed out a slice at a time. */
const BLOCK_BYTES = 4096;
let block = Buffer.alloc(0);
let used = 0;

/**
 * `length` random bytes: a slice of a block drawn from the CSPRNG for many at once. A
 * randomBytes call costs microseconds whatever its size (3.5 µs a call measured on its own, 20 µs
 * on a busy copy thread), and an archive import draws a data key and a header nonce per file
 * and a nonce per 64 KiB segment. Every slice is handed out once, and a block is never written
 * again once drawn, so a key or nonce stays what it was while it is used.
 */
export function randomSlice(length: number): Buffer {
  if (length > BLOCK_BYTES / 4) return randomBytes(length);
  if (used + length > block.length) {
    block = randomBytes(BLOCK_BYTES);
    used = 0;
  }
  const slice = block.subarray(used, used + length);
  used += length;
  return slice;
}

/** A new data key (the symmetric key of one file's body). */
export function newDataKey(): Buffer {
  return randomSlice(KEY_LENGTH);
}
