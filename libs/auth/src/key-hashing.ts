import { hash, randomInt, timingSafeEqual } from 'node:crypto';

/** Keys are stored only as this hex SHA-256, so a database leak does not leak usable keys. */
export function hashApiKey(key: string): string {
  // One-shot hash: a third of createHash's cost, which shows on every cached read.
  return hash('sha256', key, 'hex');
}

/**
 * Compares two secrets in time independent of where they differ. Hashing first gives equal
 * lengths, so the length of the expected secret does not leak either.
 */
export function constantTimeEqual(a: string, b: string): boolean {
  const left = hash('sha256', a, 'buffer');
  const right = hash('sha256', b, 'buffer');
  return timingSafeEqual(left, right);
}

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** A random key of URL-safe characters (62 symbols: about 5.95 bits each). */
export function generateApiKey(length = 48): string {
  if (!Number.isInteger(length) || length < 16) throw new RangeError('key length must be >= 16');
  let key = '';
  for (let i = 0; i < length; i++) key += ALPHABET[randomInt(ALPHABET.length)];
  return key;
}
