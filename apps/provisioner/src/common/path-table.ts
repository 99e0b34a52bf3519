import { mergeSort } from './merge-sort';

/**
 * Paths held compactly: each name's UTF-8 bytes in one buffer with its directory as a number (a
 * dataset has few directories and many files), and an open-addressing index from path to
 * position; about 10 bytes and the name a path. Subclasses keep columns of their own beside it
 * (grown with it through `grown`). Paths are rebuilt as strings only when one is asked for.
 */
export class PathTable {
  count = 0;
  protected capacity: number;
  private readonly directoryIds = new Map<string, number>();
  private readonly directories: string[] = [];
  /** prefixOf's, made when first asked for. */
  private readonly prefixBytes: (Buffer | undefined)[] = [];
  private directoryOf: Uint32Array;
  /** Name of path i: names[nameStart[i], nameStart[i + 1]). */
  private nameStart: Uint32Array;
  private names: Buffer;
  private slots: Int32Array;
  /** Bytes of the name last written past the end by probe. */
  private pendingBytes = 0;

  constructor(expected = 0) {
    this.capacity = Math.max(16, expected);
    const n = this.capacity;
    this.directoryOf = new Uint32Array(n);
    this.nameStart = new Uint32Array(n + 1);
    this.names = Buffer.allocUnsafe(n * 24);
    this.slots = new Int32Array(slotsFor(n));
  }

  /** Adds a path (to the end); false when it is held already. */
  add(path: string): boolean {
    if (this.count === this.capacity) this.grow();
    const split = path.lastIndexOf('/');
    const directory = split < 0 ? '' : path.slice(0, split);
    let dir = this.directoryIds.get(directory);
    if (dir === undefined) {
      dir = this.directories.length;
      this.directoryIds.set(directory, dir);
      this.directories.push(directory);
    }
    const { slot, found } = this.probe(dir, path, split + 1);
    if (found >= 0) return false;
    const i = this.count++;
    this.slots[slot] = i + 1;
    this.directoryOf[i] = dir;
    this.nameStart[i + 1] = this.nameStart[i] + this.pendingBytes;
    if (this.count * 4 > this.slots.length * 3) this.rehash();
    return true;
  }

  /** Position of `path`, or -1. */
  indexOf(path: string): number {
    const split = path.lastIndexOf('/');
    const dir = this.directoryIds.get(split < 0 ? '' : path.slice(0, split));
    return dir === undefined ? -1 : this.probe(dir, path, split + 1).found;
  }

  path(i: number): string {
    const name = this.names.toString('utf8', this.nameStart[i], this.nameStart[i + 1]);
    const directory = this.directories[this.directoryOf[i]];
    return directory === '' ? name : `${directory}/${name}`;
  }

  /** Bytes of path i in UTF-8. */
  pathBytes(i: number): number {
    return this.prefixOf(this.directoryOf[i]).length + this.nameStart[i + 1] - this.nameStart[i];
  }

  /** Writes path i in UTF-8 at `at` of `target` (room for pathBytes(i)): the offset after it. */
  writePath(i: number, target: Uint8Array, at: number): number {
    const prefix = this.prefixOf(this.directoryOf[i]);
    target.set(prefix, at);
    let k = at + prefix.length;
    const names = this.names;
    for (let b = this.nameStart[i], end = this.nameStart[i + 1]; b < end; b++)
      target[k++] = names[b];
    return k;
  }

  /**
   * Whether JSON.stringify writes path i as its own characters between quotes: nothing in it to
   * escape (no '"', '\\' or control character; the UTF-8 held has no lone surrogates).
   */
  isJsonPlain(i: number): boolean {
    const prefix = this.prefixOf(this.directoryOf[i]);
    for (let b = 0; b < prefix.length; b++) if (needsJsonEscape(prefix[b])) return false;
    const names = this.names;
    for (let b = this.nameStart[i], end = this.nameStart[i + 1]; b < end; b++)
      if (needsJsonEscape(names[b])) return false;
    return true;
  }

  /** A directory's path and '/' in UTF-8 (nothing for the top). */
  private prefixOf(dir: number): Buffer {
    let prefix = this.prefixBytes[dir];
    if (prefix === undefined) {
      const directory = this.directories[dir];
      prefix = this.prefixBytes[dir] = Buffer.from(directory === '' ? '' : `${directory}/`);
    }
    return prefix;
  }

  /**
   * Positions in the order of their paths as JavaScript compares strings (UTF-16 code units),
   * which is the order the stored manifest is written in. Files are put in their directories'
   * order (a counting sort), each directory's sorted by name as bytes, and only then are the
   * files of a directory that holds other directories merged with theirs: a million files in a
   * few hundred directories compare only names of one directory.
   */
  sortedByPath(): Uint32Array {
    const dirs = this.directories.length;
    const keys = this.directories.map((d) => (d === '' ? '' : `${d}/`));
    const byKey = Array.from({ length: dirs }, (_, d) => d).sort((x, y) =>
      compareStrings(keys[x], keys[y]),
    );
    const rank = new Uint32Array(dirs);
    byKey.forEach((d, r) => (rank[d] = r));
    // start[r]: where the files of the directory of rank r begin.
    const start = new Uint32Array(dirs + 1);
    for (let i = 0; i < this.count; i++) start[rank[this.directoryOf[i]] + 1] += 1;
    for (let r = 0; r < dirs; r++) start[r + 1] += start[r];
    const order = new Uint32Array(this.count);
    const next = start.slice(0, dirs);
    for (let i = 0; i < this.count; i++) order[next[rank[this.directoryOf[i]]]++] = i;
    const byName = (a: number, b: number) => this.compareNames(a, b);
    for (let r = 0; r < dirs; r++) mergeSort(order.subarray(start[r], start[r + 1]), byName);
    // The directories inside one follow it in key order. Deepest first, so each merge finds
    // the files below a directory already in order.
    for (let r = dirs - 2; r >= 0; r--) {
      const key = keys[byKey[r]];
      let end = r + 1;
      while (end < dirs && keys[byKey[end]].startsWith(key)) end++;
      if (end > r + 1) this.mergeWithin(order, start[r], start[r + 1], start[end], keys);
    }
    return order;
  }

  /**
   * Merges a directory's files, order[from, middle), with the files below it that follow them,
   * order[middle, to). A name has no '/', so it compares with a path below its directory as it
   * compares with that path's directory (its key): they differ at the '/' after the subdirectory's
   * name or before.
   */
  private mergeWithin(
    order: Uint32Array,
    from: number,
    middle: number,
    to: number,
    keys: readonly string[],
  ): void {
    if (from === middle) return;
    const own = order.slice(from, middle);
    let i = 0;
    let j = middle;
    let k = from;
    let path = this.path(own[0]);
    while (i < own.length && j < to) {
      if (compareStrings(path, keys[this.directoryOf[order[j]]]) < 0) {
        order[k++] = own[i++];
        if (i < own.length) path = this.path(own[i]);
      } else order[k++] = order[j++];
    }
    while (i < own.length) order[k++] = own[i++];
  }

  private compareNames(a: number, b: number): number {
    const names = this.names;
    let x = this.nameStart[a];
    let y = this.nameStart[b];
    const xEnd = this.nameStart[a + 1];
    const yEnd = this.nameStart[b + 1];
    for (; x < xEnd && y < yEnd; x++, y++) {
      const p = names[x];
      const q = names[y];
      if (p !== q) return utf16Order(p, q);
    }
    return xEnd - x - (yEnd - y);
  }

  /**
   * Writes the name (path from `nameFrom`) past the last name, then looks it up in directory
   * `dir`: its slot (empty when absent) and its position, or -1. add() keeps the bytes written.
   */
  private probe(dir: number, path: string, nameFrom: number): { slot: number; found: number } {
    const end = this.nameStart[this.count];
    const name = nameFrom === 0 ? path : path.slice(nameFrom);
    const room = end + name.length * 3;
    if (room > this.names.length) this.names = grown(this.names, room, end);
    const bytes = this.names.write(name, end, 'utf8');
    this.pendingBytes = bytes;
    const mask = this.slots.length - 1;
    let slot = hashOf(this.names, end, end + bytes, dir) & mask;
    for (;;) {
      const held = this.slots[slot];
      if (held === 0) return { slot, found: -1 };
      const i = held - 1;
      if (
        this.directoryOf[i] === dir &&
        this.nameStart[i + 1] - this.nameStart[i] === bytes &&
        this.names.compare(
          this.names,
          end,
          end + bytes,
          this.nameStart[i],
          this.nameStart[i + 1],
        ) === 0
      )
        return { slot, found: i };
      slot = (slot + 1) & mask;
    }
  }

  /** Columns of a subclass, grown to `capacity` entries (their first `count` kept). */
  protected grown(_capacity: number): void {}

  private grow(): void {
    const n = this.capacity * 2;
    this.directoryOf = copied(this.directoryOf, new Uint32Array(n));
    this.nameStart = copied(this.nameStart, new Uint32Array(n + 1));
    this.grown(n);
    this.capacity = n;
  }

  private rehash(): void {
    const slots = new Int32Array(this.slots.length * 2);
    const mask = slots.length - 1;
    for (let i = 0; i < this.count; i++) {
      let slot =
        hashOf(this.names, this.nameStart[i], this.nameStart[i + 1], this.directoryOf[i]) & mask;
      while (slots[slot] !== 0) slot = (slot + 1) & mask;
      slots[slot] = i + 1;
    }
    this.slots = slots;
  }
}

/** '"', '\\' and the control characters: what JSON.stringify escapes in a well-formed string. */
function needsJsonEscape(byte: number): boolean {
  return byte < 0x20 || byte === 0x22 || byte === 0x5c;
}

/** A power of two with room for `n` entries at a load of at most 3/4. */
function slotsFor(n: number): number {
  let slots = 16;
  while (slots * 3 < n * 4) slots *= 2;
  return slots;
}

export function copied<T extends Uint32Array | Uint8Array | Float64Array>(from: T, to: T): T {
  to.set(from);
  return to;
}

/** The buffer with room for `room` bytes, its first `used` kept. */
function grown(buffer: Buffer, room: number, used: number): Buffer {
  const next = Buffer.allocUnsafe(Math.max(room, Math.ceil(buffer.length * 1.5)));
  buffer.copy(next, 0, 0, used);
  return next;
}

/** FNV-1a over the name's bytes, seeded with its directory. */
function hashOf(bytes: Buffer, from: number, to: number, dir: number): number {
  let h = (0x811c9dc5 ^ dir) >>> 0;
  for (let k = from; k < to; k++) h = Math.imul(h ^ bytes[k], 0x01000193);
  return h >>> 0;
}

/**
 * Two different bytes at the same place of two UTF-8 texts, ordered as their texts compare in
 * UTF-16: byte order is code point order, except that the lead byte of a character past U+FFFF
 * (0xF0-0xF4, a surrogate pair in UTF-16) sorts before those of U+E000-U+FFFF (0xEE, 0xEF).
 */
function utf16Order(p: number, q: number): number {
  if (p >= 0xf0 && (q === 0xee || q === 0xef)) return -1;
  if (q >= 0xf0 && (p === 0xee || p === 0xef)) return 1;
  return p - q;
}

function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
