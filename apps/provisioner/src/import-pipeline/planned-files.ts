import { copied, PathTable } from '../common/path-table';
import { createHash } from 'node:crypto';
import type { ChecksumAlgorithm } from '../sources/source-system';

export const DIGEST_BYTES: Record<ChecksumAlgorithm, number> = { sha256: 32, md5: 16 };
const HEX = Buffer.from('0123456789abcdef', 'latin1');

/** Flags of a file. */
const WALKED = 1;
const UNREADABLE = 2;
/** The second manifest listed the file. */
const LISTED_TWICE = 4;
/** An earlier attempt staged it, and this one keeps that copy. */
const KEPT = 8;

const NO_DEV = -1;

/**
 * The files of an import's plan, in manifest order, held as columns rather than objects: the
 * paths in a PathTable, digests as binary, sizes and stat fields in typed arrays. About 70
 * bytes and the name's bytes a file, where objects, strings and maps took about 650
 * (docs/decisions/import-plan-as-columns.md). Digests are rebuilt as hex only when asked for.
 */
export class PlannedFiles extends PathTable {
  private flags: Uint8Array;
  size: Float64Array;
  /**
   * Inodes in 32 bits while every one fits (most filesystems' numbers do; 4 bytes a file less
   * than a Float64Array, 4 MB at a million files), in a Float64Array from the first one that does
   * not. Read through inoOf: the column is replaced when it widens.
   */
  private inos: Uint32Array | Float64Array;
  /** Modification and change times: held only when an earlier attempt's files may be kept. */
  mtimeMs: Float64Array | null;
  ctimeMs: Float64Array | null;
  /** Every file's device while they share one (the usual case); else `devs`. */
  private dev = NO_DEV;
  private devs: Float64Array | null = null;
  private readonly digests: Partial<Record<ChecksumAlgorithm, Buffer>> = {};
  /** The ETag of each object of a remote dataset (setWalked with a version); null otherwise. */
  private versions: ObjectVersions | null = null;

  constructor(options: { expectedFiles?: number; times?: boolean } = {}) {
    super(options.expectedFiles);
    const n = this.capacity;
    this.flags = new Uint8Array(n);
    this.size = new Float64Array(n);
    this.inos = new Uint32Array(n);
    this.mtimeMs = options.times ? new Float64Array(n) : null;
    this.ctimeMs = options.times ? new Float64Array(n) : null;
    this.digest('sha256');
  }

  /**
   * Records what the walk found for file i; with `version`, an object's ETag (a remote dataset),
   * kept for the copy to read that version only.
   */
  setWalked(
    i: number,
    stats: { size: number; ino: number; dev: number; mtimeMs: number; ctimeMs: number },
    readable: boolean,
    version?: string,
  ): void {
    if (version !== undefined) (this.versions ??= new ObjectVersions()).set(i, version);
    this.flags[i] |= WALKED | (readable ? 0 : UNREADABLE);
    this.size[i] = stats.size;
    this.setIno(i, stats.ino);
    this.setDev(i, stats.dev);
    if (this.mtimeMs) this.mtimeMs[i] = stats.mtimeMs;
    if (this.ctimeMs) this.ctimeMs[i] = stats.ctimeMs;
  }

  /** The ETag the walk found of file i of a remote dataset. */
  version(i: number): string {
    return this.versions!.get(i);
  }

  walked(i: number): boolean {
    return (this.flags[i] & WALKED) !== 0;
  }

  /** False when the permission bits may refuse reading (access(2) decides). */
  readable(i: number): boolean {
    return (this.flags[i] & UNREADABLE) === 0;
  }

  inoOf(i: number): number {
    return this.inos[i];
  }

  devOf(i: number): number {
    return this.devs ? this.devs[i] : this.dev;
  }

  /**
   * Marks file i as listed by the second manifest; false when it was already (the second
   * manifest repeats the path).
   */
  listAgain(i: number): boolean {
    if (this.flags[i] & LISTED_TWICE) return false;
    this.flags[i] |= LISTED_TWICE;
    return true;
  }

  listedTwice(i: number): boolean {
    return (this.flags[i] & LISTED_TWICE) !== 0;
  }

  /** Marks file i as kept from an earlier attempt (its copy is not made again). */
  keep(i: number): void {
    this.flags[i] |= KEPT;
  }

  kept(i: number): boolean {
    return (this.flags[i] & KEPT) !== 0;
  }

  /** Stores file i's digest, given as hex. */
  setDigest(algorithm: ChecksumAlgorithm, i: number, hex: string): void {
    this.digest(algorithm).write(hex, i * DIGEST_BYTES[algorithm], DIGEST_BYTES[algorithm], 'hex');
  }

  /** File i's digest as lowercase hex; undefined when `algorithm`'s digests are not held. */
  digestHex(algorithm: ChecksumAlgorithm, i: number): string | undefined {
    const column = this.digests[algorithm];
    const width = DIGEST_BYTES[algorithm];
    return column?.toString('hex', i * width, (i + 1) * width);
  }

  /** Writes file i's `algorithm` digest (held) as lowercase hex at `at` of `target`: the offset after it. */
  writeDigestHex(algorithm: ChecksumAlgorithm, i: number, target: Uint8Array, at: number): number {
    const column = this.digests[algorithm]!;
    const width = DIGEST_BYTES[algorithm];
    let k = at;
    for (let b = i * width, end = b + width; b < end; b++) {
      target[k++] = HEX[column[b] >> 4];
      target[k++] = HEX[column[b] & 15];
    }
    return k;
  }

  /** Whether file i's stored digest is `hex` (lowercase), without building a string. */
  digestIs(algorithm: ChecksumAlgorithm, i: number, hex: string): boolean {
    const column = this.digests[algorithm];
    const width = DIGEST_BYTES[algorithm];
    if (!column || hex.length !== width * 2) return false;
    for (let k = 0; k < width; k++) {
      const byte = column[i * width + k];
      if (hexValue(hex, 2 * k) !== byte >> 4 || hexValue(hex, 2 * k + 1) !== (byte & 15))
        return false;
    }
    return true;
  }

  protected override grown(n: number): void {
    this.flags = copied(this.flags, new Uint8Array(n));
    this.size = copied(this.size, new Float64Array(n));
    this.inos =
      this.inos instanceof Uint32Array
        ? copied(this.inos, new Uint32Array(n))
        : copied(this.inos, new Float64Array(n));
    if (this.mtimeMs) this.mtimeMs = copied(this.mtimeMs, new Float64Array(n));
    if (this.ctimeMs) this.ctimeMs = copied(this.ctimeMs, new Float64Array(n));
    if (this.devs) this.devs = copied(this.devs, new Float64Array(n));
    for (const algorithm of Object.keys(this.digests) as ChecksumAlgorithm[]) {
      const column = Buffer.alloc(n * DIGEST_BYTES[algorithm]);
      this.digests[algorithm]!.copy(column);
      this.digests[algorithm] = column;
    }
  }

  private digest(algorithm: ChecksumAlgorithm): Buffer {
    let column = this.digests[algorithm];
    if (!column) {
      column = Buffer.alloc(this.capacity * DIGEST_BYTES[algorithm]);
      this.digests[algorithm] = column;
    }
    return column;
  }

  private setIno(i: number, ino: number): void {
    if (this.inos instanceof Uint32Array && ino > 0xffffffff)
      this.inos = Float64Array.from(this.inos);
    this.inos[i] = ino;
  }

  private setDev(i: number, dev: number): void {
    if (this.devs) this.devs[i] = dev;
    else if (this.dev === NO_DEV || this.dev === dev) this.dev = dev;
    else {
      this.devs = new Float64Array(this.capacity).fill(this.dev);
      this.devs[i] = dev;
    }
  }
}

function hexValue(hex: string, at: number): number {
  const c = hex.charCodeAt(at);
  return c <= 0x39 ? c - 0x30 : c - 0x57;
}

const MD5_HEX = /^[0-9a-f]{32}$/;

/**
 * The ETag preflight listed of each file of a remote dataset, by plan index: an MD5 ETag (most
 * objects) as its 16 bytes in one growing buffer, any other (a multipart upload's `<md5>-<n>`)
 * in a map. A million files take 16 MB, not the 80 MB of a million strings.
 */
class ObjectVersions {
  private bytes = Buffer.alloc(16 * 1024);
  private readonly others = new Map<number, string>();

  set(index: number, etag: string): void {
    if (!MD5_HEX.test(etag)) {
      this.others.set(index, etag);
      return;
    }
    this.others.delete(index);
    if ((index + 1) * 16 > this.bytes.length) {
      const grown = Buffer.alloc(Math.max(this.bytes.length * 2, (index + 1) * 16));
      this.bytes.copy(grown);
      this.bytes = grown;
    }
    this.bytes.write(etag, index * 16, 16, 'hex');
  }

  get(index: number): string {
    return this.others.get(index) ?? this.bytes.toString('hex', index * 16, index * 16 + 16);
  }
}

/**
 * A number standing for an object's ETag where a local file's inode goes (what a later attempt
 * compares before keeping a staged copy): 52 bits of its SHA-256, a safe integer.
 */
export function objectFingerprint(etag: string): number {
  return parseInt(createHash('sha256').update(etag).digest('hex').slice(0, 13), 16);
}
