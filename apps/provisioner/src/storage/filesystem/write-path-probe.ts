import { createHash, randomFillSync } from 'node:crypto';
import { constants } from 'node:fs';
import { type FileHandle, mkdir, open } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { allocAligned } from './direct-object-writer';

/**
 * How the probe writes: as an import writes its large files on the copy threads. Several files
 * at once, in the threads' 1 MiB chunks, each chunk hashed (SHA-256) before it is written; past
 * the page cache with several writes in flight per file (the threads' DIRECT_WRITE_BUFFERS),
 * through it one write at a time per file (the threads' blocking path); then every file's
 * fdatasync, as the import's one syncfs.
 */
export interface WriteProbeShape {
  /** Files written at once (the copy threads of a two-core worker). */
  files: number;
  /** Bytes of each file. */
  fileBytes: number;
  /** Bytes per write (the copy threads' chunk). */
  chunkBytes: number;
  /** Direct writes in flight per file (the copy threads' DIRECT_WRITE_BUFFERS). */
  directInFlight: number;
  /** Timed writes each way, alternating; the median of each counts. */
  rounds: number;
}

/**
 * Two files of 48 MiB at once, three times each way: 576 MiB of unnamed files as the worker
 * starts (about 2 s on the disk measured), then once a day.
 */
export const WRITE_PROBE: WriteProbeShape = {
  files: 2,
  fileBytes: 48 * 1024 * 1024,
  chunkBytes: 1024 * 1024,
  directInFlight: 4,
  rounds: 3,
};
/**
 * Direct writes are kept unless the page cache is faster by more than this: at a tie they cost
 * the kernel no copy of each byte and leave the cache to the files that are read again.
 */
export const CACHED_MUST_WIN_BY = 1.05;
/** A choice is measured again after this long: a virtual machine's disk changes with its host. */
export const WRITE_PROBE_MAX_AGE_MS = 24 * 60 * 60 * 1000;

/** What one probe measured, and the choice it makes. */
export interface WritePathMeasurement {
  /** True: files of the direct size are written past the page cache. */
  direct: boolean;
  /** Bytes of one timed write (all its files). */
  bytes: number;
  /**
   * The median direct write (O_DIRECT, then fdatasync); null where the filesystem refuses it,
   * or where nothing was measured.
   */
  directMs: number | null;
  /**
   * The median write through the page cache followed by fdatasync; null where nothing could be
   * measured (a filesystem without unnamed files, O_TMPFILE, such as NFS): direct writes are kept
   * there, as with `true`, and each file falls back to the cache if O_DIRECT is refused.
   */
  cachedMs: number | null;
  /** Every timed write, in the order taken (for the log). */
  directRuns: number[];
  cachedRuns: number[];
}

/**
 * Times the two ways large files can reach this disk durably, as the import writes them
 * (WriteProbeShape): past the page cache (O_DIRECT, aligned chunks, then fdatasync) and through
 * it (the same chunks, then fdatasync, as `cp` and `sync -f` do). Random bytes, so that no
 * compressing or deduplicating layer shortens either. Every file is unnamed (O_TMPFILE) in
 * `stagingRoot`: nothing is listed or left behind, even by a worker killed while it measures.
 */
export async function measureWritePaths(
  stagingRoot: string,
  shape: WriteProbeShape = WRITE_PROBE,
): Promise<WritePathMeasurement> {
  await mkdir(stagingRoot, { recursive: true });
  const chunk = randomFillSync(allocAligned(shape.chunkBytes));
  const bytes = shape.files * shape.fileBytes;
  const runs = { direct: [] as number[], cached: [] as number[] };
  let directRefused = false;
  for (let round = 0; round < shape.rounds; round++) {
    // direct, cached, then cached, direct: a disk that speeds up or slows down meanwhile
    // favours neither.
    const order = round % 2 === 0 ? [true, false] : [false, true];
    for (const direct of order) {
      if (direct && directRefused) continue;
      const handles = await openUnnamedFiles(stagingRoot, direct, shape.files);
      if (handles === 'refused') {
        if (!direct) return notMeasured(bytes);
        directRefused = true;
        continue;
      }
      const ms = await timedWrites(handles, chunk, shape, direct);
      (direct ? runs.direct : runs.cached).push(ms);
    }
  }
  const directMs = directRefused ? null : median(runs.direct);
  const cachedMs = median(runs.cached);
  return {
    direct: prefersDirect(directMs, cachedMs),
    bytes,
    directMs,
    cachedMs,
    directRuns: runs.direct,
    cachedRuns: runs.cached,
  };
}

function notMeasured(bytes: number): WritePathMeasurement {
  return {
    direct: true,
    bytes,
    directMs: null,
    cachedMs: null,
    directRuns: [],
    cachedRuns: [],
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** Linux's O_TMPFILE (with O_DIRECTORY, as the kernel defines it): Node does not export it. */
const O_TMPFILE = 0o20000000 | constants.O_DIRECTORY;

/**
 * `count` unnamed files in `dir`, or 'refused': O_DIRECT refused (EINVAL), or no unnamed files
 * on this filesystem (EOPNOTSUPP; EISDIR on kernels without O_TMPFILE).
 */
async function openUnnamedFiles(
  dir: string,
  direct: boolean,
  count: number,
): Promise<FileHandle[] | 'refused'> {
  const flags = O_TMPFILE | constants.O_WRONLY | (direct ? constants.O_DIRECT : 0);
  const handles: FileHandle[] = [];
  try {
    for (let i = 0; i < count; i++) handles.push(await open(dir, flags, 0o600));
    return handles;
  } catch (error) {
    await Promise.all(handles.map((handle) => handle.close()));
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EINVAL' || code === 'EOPNOTSUPP' || code === 'EISDIR') return 'refused';
    throw error;
  }
}

/** Milliseconds to write and datasync every file at once; the files are gone once closed. */
async function timedWrites(
  handles: FileHandle[],
  chunk: Buffer,
  shape: WriteProbeShape,
  direct: boolean,
): Promise<number> {
  try {
    const start = performance.now();
    const files = await Promise.allSettled(
      handles.map((handle) => writeFile(handle, chunk, shape, direct ? shape.directInFlight : 1)),
    );
    const failed = files.find((file): file is PromiseRejectedResult => file.status === 'rejected');
    if (failed) throw failed.reason as Error;
    return performance.now() - start;
  } finally {
    await Promise.all(handles.map((handle) => handle.close()));
  }
}

/**
 * One file, chunk by chunk: each hashed, then written at its position with at most `inFlight`
 * writes outstanding, then fdatasync. The hash is the import's CPU beside its writes: through the
 * page cache the kernel's copy of each byte competes with it for the cores, past it the device
 * works while the thread hashes.
 */
async function writeFile(
  handle: FileHandle,
  chunk: Buffer,
  shape: WriteProbeShape,
  inFlight: number,
): Promise<void> {
  const hash = createHash('sha256');
  const pending: Promise<unknown>[] = [];
  try {
    for (let offset = 0; offset < shape.fileBytes; offset += chunk.length) {
      const length = Math.min(chunk.length, shape.fileBytes - offset);
      hash.update(chunk.subarray(0, length));
      if (pending.length >= inFlight) await pending.shift();
      const write = handle.write(chunk, 0, length, offset);
      // Rethrown where it is awaited; meanwhile no unhandled rejection (it would end the worker).
      write.catch(() => undefined);
      pending.push(write);
    }
    await Promise.all(pending.splice(0));
    await handle.datasync();
  } finally {
    // Every write has ended before its handle is closed, on any outcome.
    await Promise.allSettled(pending);
  }
  hash.digest();
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
