/**
 * A set of paths that keeps 64 bits of hash per path instead of the path (8 bytes per slot,
 * at most half full: about 20 bytes per path against some 100 for a Set of strings). Listings
 * use it to find a manifest's repeated paths and to match a second manifest against the first
 * without holding a million strings; an import request, to mark the paths a walk of the payload
 * found. Two different paths share all 64 bits with a probability
 * of about n²/2^65 (one in 10^8 for a million paths): a listing could then call a manifest
 * invalid; the import's preflight checks with the paths themselves and has the last word.
 */
export class PathHashSet {
  private high = new Uint32Array(1024);
  private low = new Uint32Array(1024);
  /** Per slot: TAKEN, and MATCHED (by a second manifest) and PRESENT (found on disk) flags. */
  private state = new Uint8Array(1024);
  private count = 0;
  private matchedCount = 0;
  private presentCount = 0;

  get size(): number {
    return this.count;
  }

  /** Adds a path; false when it was there already. */
  add(path: string): boolean {
    const [h, l] = hashPath(path);
    const slot = this.find(h, l);
    if (this.state[slot] !== EMPTY) return false;
    this.high[slot] = h;
    this.low[slot] = l;
    this.state[slot] = TAKEN;
    this.count += 1;
    if (this.count * 2 > this.state.length) this.grow();
    return true;
  }

  /**
   * Marks a path of another list as matched: false when it is not in the set or was matched
   * already (so a list matches the set exactly when every call is true and `allMatched`).
   */
  match(path: string): boolean {
    const [h, l] = hashPath(path);
    const slot = this.find(h, l);
    if (this.state[slot] === EMPTY || this.state[slot] & MATCHED) return false;
    this.state[slot] |= MATCHED;
    this.matchedCount += 1;
    return true;
  }

  get allMatched(): boolean {
    return this.matchedCount === this.count;
  }

  /** Marks a path of the set as found (a path not in it is ignored). */
  markPresent(path: string): void {
    const [h, l] = hashPath(path);
    const slot = this.find(h, l);
    if (this.state[slot] === EMPTY || this.state[slot] & PRESENT) return;
    this.state[slot] |= PRESENT;
    this.presentCount += 1;
  }

  isPresent(path: string): boolean {
    const [h, l] = hashPath(path);
    return (this.state[this.find(h, l)] & PRESENT) !== 0;
  }

  get allPresent(): boolean {
    return this.presentCount === this.count;
  }

  private find(h: number, l: number): number {
    const mask = this.state.length - 1;
    let slot = l & mask;
    while (this.state[slot] !== EMPTY && (this.high[slot] !== h || this.low[slot] !== l))
      slot = (slot + 1) & mask;
    return slot;
  }

  private grow(): void {
    const { high, low, state } = this;
    this.high = new Uint32Array(state.length * 2);
    this.low = new Uint32Array(state.length * 2);
    this.state = new Uint8Array(state.length * 2);
    for (let i = 0; i < state.length; i++) {
      if (state[i] === EMPTY) continue;
      const slot = this.find(high[i], low[i]);
      this.high[slot] = high[i];
      this.low[slot] = low[i];
      this.state[slot] = state[i];
    }
  }
}

const EMPTY = 0;
const TAKEN = 1;
const MATCHED = 2;
const PRESENT = 4;

/** Murmur3's finaliser: every input bit affects every output bit. */
function mix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Two independent 32-bit hashes of the path's UTF-16 units (FNV-1a and a Murmur-style one). */
function hashPath(path: string): [number, number] {
  let h = 0x811c9dc5;
  let l = 0x9747b28c;
  for (let i = 0; i < path.length; i++) {
    const c = path.charCodeAt(i);
    h = Math.imul(h ^ c, 0x01000193);
    l = Math.imul(l ^ c, 0x5bd1e995);
    l = (l << 13) | (l >>> 19);
  }
  return [mix(h), mix(l ^ path.length)];
}
