import type { Hash } from 'node:crypto';

/**
 * Joins a chunk's sealed parts (nonce, cipher-text, MAC per segment) for one write, hashing
 * them on the way: one write per sealed segment would be three per 64 KiB. The buffer is kept
 * for the next chunks (a writer is done with a chunk once its write returns), so a large file
 * does not allocate its size a second time, and grows only to the largest chunk seen.
 */
export class SealedPartsJoiner {
  private joined = Buffer.allocUnsafe(0);

  /** The parts as one buffer (a view valid until the next call); null when there are none. */
  join(parts: readonly Buffer[], hash: Hash): Buffer | null {
    if (parts.length === 0) return null;
    let length = 0;
    for (const part of parts) {
      hash.update(part);
      length += part.length;
    }
    if (this.joined.length < length) this.joined = Buffer.allocUnsafe(length);
    let at = 0;
    for (const part of parts) at += part.copy(this.joined, at);
    return this.joined.subarray(0, length);
  }
}
