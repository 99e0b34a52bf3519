import { randomFillSync } from 'node:crypto';
import { constants } from 'node:fs';
import { type FileHandle, mkdir, open } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { allocAligned } from './direct-object-writer';

/** Bytes each timed write puts on the disk: enough to pass the disk's write cache and queue. */
export const WRITE_PROBE_BYTES = 32 * 1024 * 1024;
/** Written in blocks of this size, the size the copy threads gather a direct body in. */
const PROBE_BLOCK_BYTES = 4 * 1024 * 1024;
/** Each way is timed this often, alternating; the fastest of each counts. */
const PROBE_ROUNDS = 2;
/**
 * Direct writes are kept unless the page cache is faster by more than this: at a tie they cost
 * the kernel no copy of each byte and leave the cache to the files that are read again.
 */
export const CACHED_MUST_WIN_BY = 1.1;
/** A choice is measured again after this long: a virtual machine's disk changes with its host. */
export const WRITE_PROBE_MAX_AGE_MS = 24 * 60 * 60 * 1000;

/** What one probe measured, and the choice it makes. */
export interface WritePathMeasurement {
  /** True: files of the direct size are written past the page cache. */
  direct: boolean;
  bytes: number;
  /**
   * The fastest direct write (O_DIRECT, then fdatasync); null where the filesystem refuses it,
   * or where nothing was measured.
   */
  directMs: number | null;
  /**
   * The fastest write through the page cache followed by fdatasync; null where nothing could be
   * measured (a filesystem without unnamed files, O_TMPFILE, such as NFS): direct writes are kept
   * there, as with `true`, and each file falls back to the cache if O_DIRECT is refused.
   */
  cachedMs: number | null;
}

/**
 * Times the two ways a large file can reach this disk durably, as the import would write it:
 * past the page cache (O_DIRECT, aligned blocks, then fdatasync) and through it (the same
 * blocks, then one fdatasync, as `cp` and `sync -f` do). Random bytes, so that no compressing
 * or deduplicating layer shortens either. Every file is unnamed (O_TMPFILE) in `stagingRoot`:
 * nothing is listed or left behind, even by a worker killed while it measures.
 */
export async function measureWritePaths(
  stagingRoot: string,
  bytes = WRITE_PROBE_BYTES,
): Promise<WritePathMeasurement> {
  await mkdir(stagingRoot, { recursive: true });
  const block = randomFillSync(allocAligned(PROBE_BLOCK_BYTES));
  let directMs: number | null = Infinity;
  let cachedMs = Infinity;
  for (let round = 0; round < PROBE_ROUNDS; round++) {
    // direct, cached, then cached, direct: a disk that speeds up or slows down meanwhile
    // favours neither.
    const order = round % 2 === 0 ? [true, false] : [false, true];
    for (const direct of order) {
      if (direct && directMs === null) continue;
      const handle = await openUnnamed(stagingRoot, direct);
      if (handle === 'refused') {
        if (!direct) return { direct: true, bytes, directMs: null, cachedMs: null };
        directMs = null;
        continue;
      }
      const ms = await timedWrite(handle, block, bytes);
      if (direct) directMs = Math.min(directMs as number, ms);
      else cachedMs = Math.min(cachedMs, ms);
    }
  }
  return { direct: prefersDirect(directMs, cachedMs), bytes, directMs, cachedMs };
}

/** Linux's O_TMPFILE (with O_DIRECTORY, as the kernel defines it): Node does not export it. */
const O_TMPFILE = 0o20000000 | constants.O_DIRECTORY;

/**
 * An unnamed file in `dir`, or 'refused': O_DIRECT refused (EINVAL), or no unnamed files on
 * this filesystem (EOPNOTSUPP; EISDIR on kernels without O_TMPFILE).
 */
async function openUnnamed(dir: string, direct: boolean): Promise<FileHandle | 'refused'> {
  const flags = O_TMPFILE | constants.O_WRONLY | (direct ? constants.O_DIRECT : 0);
  try {
    return await open(dir, flags, 0o600);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EINVAL' || code === 'EOPNOTSUPP' || code === 'EISDIR') return 'refused';
    throw error;
  }
}

/** Milliseconds to write and datasync `bytes`; the file is gone once closed. */
async function timedWrite(handle: FileHandle, block: Buffer, bytes: number): Promise<number> {
  try {
    const start = performance.now();
    for (let offset = 0; offset < bytes; offset += block.length)
      await handle.write(block, 0, Math.min(block.length, bytes - offset), offset);
    await handle.datasync();
    return performance.now() - start;
  } finally {
    await handle.close();
  }
}

/**
 * Direct unless refused or slower than the page cache by more than CACHED_MUST_WIN_BY; direct
 * where nothing was measured (`cachedMs` null).
 */
export function prefersDirect(directMs: number | null, cachedMs: number | null): boolean {
  if (cachedMs === null) return true;
  return directMs !== null && directMs <= cachedMs * CACHED_MUST_WIN_BY;
}

/**
 * The write path of one storage root under `IMPORT_DIRECT_WRITES=auto`: measured when an import
 * first asks, shared by the imports that ask meanwhile, measured again once it is a day old. A
 * probe that fails (a full disk) leaves those imports on direct writes, as `true` would, and
 * the next import measures again.
 */
export class WritePathChoice {
  private current: { at: number; measurement: Promise<WritePathMeasurement> } | undefined;

  constructor(
    private readonly onMeasured: (measurement: WritePathMeasurement) => void,
    private readonly onFailed: (error: Error) => void,
    private readonly measure: (stagingRoot: string) => Promise<WritePathMeasurement> = (root) =>
      measureWritePaths(root),
    private readonly maxAgeMs = WRITE_PROBE_MAX_AGE_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /** Whether files of the direct size are written past the page cache now. */
  async direct(stagingRoot: string): Promise<boolean> {
    const at = this.now();
    let current = this.current;
    if (current === undefined || at - current.at >= this.maxAgeMs) {
      const started = { at, measurement: this.measure(stagingRoot) };
      current = this.current = started;
      started.measurement.then(this.onMeasured, (error: Error) => {
        // Not kept: the next import measures again.
        if (this.current === started) this.current = undefined;
        this.onFailed(error);
      });
    }
    return current.measurement.then(
      (measurement) => measurement.direct,
      () => true,
    );
  }
}
