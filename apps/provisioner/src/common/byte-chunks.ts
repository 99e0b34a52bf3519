/** How the entries of a long list (a stored manifest, a provenance's files) are written as bytes. */
export interface EntryWriter {
  /** Bytes entry i takes, at most. */
  bytes(i: number): number;
  /** Writes entry i at `at` of `target` (room for bytes(i)): the offset after it. */
  write(i: number, target: Buffer, at: number): number;
}

/** Size of the pieces byteChunks hands out. */
const CHUNK_BYTES = 1024 * 1024;

/**
 * The entries in `order`, `between` between two, in pieces of about CHUNK_BYTES, each written
 * only when the one before was taken: a list of a million entries is never held whole, nor as
 * strings.
 */
export function* byteChunks(
  order: Iterable<number>,
  entries: EntryWriter,
  between: Uint8Array = new Uint8Array(0),
): Generator<Buffer> {
  let chunk = Buffer.allocUnsafe(CHUNK_BYTES);
  let at = 0;
  let first = true;
  for (const i of order) {
    const length = entries.bytes(i) + (first ? 0 : between.length);
    if (at + length > chunk.length) {
      if (at > 0) yield chunk.subarray(0, at);
      chunk = Buffer.allocUnsafe(Math.max(CHUNK_BYTES, length));
      at = 0;
    }
    if (!first) {
      chunk.set(between, at);
      at += between.length;
    }
    at = entries.write(i, chunk, at);
    first = false;
  }
  if (at > 0) yield chunk.subarray(0, at);
}

/** Entries given as text (tests, small lists, the odd entry that needs escaping). */
export function textEntries(text: (i: number) => string): EntryWriter {
  // bytes() then write() of the same entry: its text is made once.
  let last = -1;
  let lastText = '';
  const of = (i: number) => {
    if (i !== last) [last, lastText] = [i, text(i)];
    return lastText;
  };
  return {
    bytes: (i) => Buffer.byteLength(of(i)),
    write: (i, target, at) => at + target.write(of(i), at, 'utf8'),
  };
}

const DIGITS = 0x30;

/** Decimal digits of a non-negative integer (a file's size). */
export function decimalBytes(n: number): number {
  let digits = 1;
  for (let rest = Math.floor(n / 10); rest > 0; rest = Math.floor(rest / 10)) digits += 1;
  return digits;
}

/** Writes a non-negative integer in decimal at `at` of `target`: the offset after it. */
export function writeDecimal(n: number, target: Buffer, at: number): number {
  const end = at + decimalBytes(n);
  let rest = n;
  for (let k = end - 1; k >= at; k--) {
    target[k] = DIGITS + (rest % 10);
    rest = Math.floor(rest / 10);
  }
  return end;
}
