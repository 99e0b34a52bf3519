import { constants, mkdirSync, readdirSync } from 'node:fs';
import type * as FsPromises from 'node:fs/promises';
import { join } from 'node:path';
import { tempDir } from '../../../test/support/dropzone-fixture';
import {
  CACHED_MUST_WIN_BY,
  measureWritePaths,
  prefersDirect,
  WRITE_PROBE,
  type WritePathMeasurement,
  WritePathChoice,
  type WriteProbeShape,
} from './write-path-probe';

/** The module the probe calls into (its namespace import is not spied on). */
const fsPromises = jest.requireActual<typeof FsPromises>('node:fs/promises');

const MiB = 1024 * 1024;

describe('measureWritePaths', () => {
  /** The flags of every file the probe opens while `work` runs. */
  async function openFlags(work: () => Promise<unknown>): Promise<number[]> {
    const flags: number[] = [];
    const real = fsPromises.open;
    const spy = jest.spyOn(fsPromises, 'open').mockImplementation((path, how, mode) => {
      flags.push(how as number);
      return real(path, how, mode);
    });
    try {
      await work();
    } finally {
      spy.mockRestore();
    }
    return flags;
  }

  /** A small probe of the shipped shape: two files at once, three rounds each way. */
  const small: WriteProbeShape = { ...WRITE_PROBE, fileBytes: 4 * MiB };

  it('times direct and cached writes of several files at once, alternating, in unnamed files that leave nothing behind', async () => {
    const stagingRoot = join(tempDir('write-probe'), '.staging');
    mkdirSync(join(stagingRoot, 'an-import'), { recursive: true });
    let measured: WritePathMeasurement | undefined;
    const flags = await openFlags(async () => {
      measured = await measureWritePaths(stagingRoot, small);
    });
    // Two files at once each time; (direct, cached), (cached, direct), (direct, cached): drift
    // on the disk favours neither way.
    const d = true;
    const c = false;
    expect(flags.map((f) => (f & constants.O_DIRECT) !== 0)).toEqual([
      ...[d, d, c, c],
      ...[c, c, d, d],
      ...[d, d, c, c],
    ]);
    // O_TMPFILE (Linux's 020000000, with O_DIRECTORY): no name, so a killed probe leaves nothing.
    for (const f of flags) expect(f & 0o20000000).toBe(0o20000000);
    expect(measured!.bytes).toBe(2 * 4 * MiB);
    // This test's filesystem (ext4 or xfs under the temporary directory) takes both.
    expect(measured!.directRuns).toHaveLength(3);
    expect(measured!.cachedRuns).toHaveLength(3);
    // The medians count, not the fastest: one lucky write does not decide.
    expect(measured!.directMs).toBe([...measured!.directRuns].sort((a, b) => a - b)[1]);
    expect(measured!.cachedMs).toBe([...measured!.cachedRuns].sort((a, b) => a - b)[1]);
    expect(measured!.cachedMs).toBeGreaterThan(0);
    expect(measured!.direct).toBe(prefersDirect(measured!.directMs, measured!.cachedMs));
    expect(readdirSync(stagingRoot)).toEqual(['an-import']);
  });

  it("writes as the copy threads do: the threads' chunks, several in flight past the cache, one at a time through it", async () => {
    const stagingRoot = tempDir('write-probe');
    const inFlight = { direct: 0, cached: 0 };
    const most = { direct: 0, cached: 0 };
    const sizes = new Set<number>();
    const realOpen = fsPromises.open;
    const spy = jest.spyOn(fsPromises, 'open').mockImplementation(async (path, how, mode) => {
      const handle = await realOpen(path, how, mode);
      const way = (how as number) & constants.O_DIRECT ? 'direct' : 'cached';
      const write = handle.write.bind(handle) as (...args: unknown[]) => Promise<unknown>;
      (handle as { write: unknown }).write = async (...args: unknown[]) => {
        sizes.add(args[2] as number);
        most[way] = Math.max(most[way], ++inFlight[way]);
        try {
          return await write(...args);
        } finally {
          inFlight[way]--;
        }
      };
      return handle;
    });
    try {
      await measureWritePaths(stagingRoot, { ...small, rounds: 1 });
    } finally {
      spy.mockRestore();
    }
    expect([...sizes]).toEqual([WRITE_PROBE.chunkBytes]);
    // Per file: the threads' direct buffers in flight, or one blocking write; two files at once.
    expect(most.direct).toBeLessThanOrEqual(2 * WRITE_PROBE.directInFlight);
    expect(most.direct).toBeGreaterThan(2);
    expect(most.cached).toBeLessThanOrEqual(2);
    expect(readdirSync(stagingRoot)).toEqual([]);
  });

  it('makes the staging root when there is none yet, and leaves it empty', async () => {
    const stagingRoot = join(tempDir('write-probe'), 'storage', '.staging');
    await measureWritePaths(stagingRoot, small);
    expect(readdirSync(stagingRoot)).toEqual([]);
  });

  it('measures nothing and keeps direct writes where the filesystem has no unnamed files', async () => {
    const stagingRoot = tempDir('write-probe');
    const real = fsPromises.open;
    const spy = jest
      .spyOn(fsPromises, 'open')
      .mockImplementation((path, how, mode) =>
        (how as number) & 0o20000000
          ? Promise.reject(Object.assign(new Error('not supported'), { code: 'EOPNOTSUPP' }))
          : real(path, how, mode),
      );
    try {
      expect(await measureWritePaths(stagingRoot, small)).toEqual({
        direct: true,
        bytes: 2 * 4 * MiB,
        directMs: null,
        cachedMs: null,
        directRuns: [],
        cachedRuns: [],
      });
    } finally {
      spy.mockRestore();
    }
  });

  it('chooses the page cache where the filesystem refuses O_DIRECT', async () => {
    const stagingRoot = tempDir('write-probe');
    const real = fsPromises.open;
    const spy = jest
      .spyOn(fsPromises, 'open')
      .mockImplementation((path, how, mode) =>
        (how as number) & constants.O_DIRECT
          ? Promise.reject(Object.assign(new Error('invalid'), { code: 'EINVAL' }))
          : real(path, how, mode),
      );
    try {
      const measured = await measureWritePaths(stagingRoot, small);
      expect(measured).toMatchObject({ direct: false, directMs: null, directRuns: [] });
      expect(measured.cachedMs).toBeGreaterThan(0);
    } finally {
      spy.mockRestore();
    }
  });
});

describe('prefersDirect', () => {
  it('keeps direct writes unless the page cache is faster by more than the margin, or O_DIRECT is refused', () => {
    expect(prefersDirect(100, 200)).toBe(true);
    expect(prefersDirect(100, 100)).toBe(true);
    expect(prefersDirect(100 * CACHED_MUST_WIN_BY, 100)).toBe(true);
    expect(prefersDirect(100 * CACHED_MUST_WIN_BY + 1, 100)).toBe(false);
    expect(prefersDirect(300, 100)).toBe(false);
    expect(prefersDirect(null, 100)).toBe(false);
    // Nothing measured: as `true`.
    expect(prefersDirect(null, null)).toBe(true);
  });
});

describe('WritePathChoice', () => {
  const measurement = (direct: boolean): WritePathMeasurement => ({
    direct,
    bytes: 32 * MiB,
    directMs: direct ? 50 : 90,
    cachedMs: 70,
    directRuns: [direct ? 50 : 90],
    cachedRuns: [70],
  });

  function choice(
    results: Array<WritePathMeasurement | Error>,
    maxAgeMs = 1000,
  ): {
    choice: WritePathChoice;
    clock: { now: number };
    measured: WritePathMeasurement[];
    failed: Error[];
    calls: string[];
  } {
    const clock = { now: 0 };
    const measured: WritePathMeasurement[] = [];
    const failed: Error[] = [];
    const calls: string[] = [];
    const made = new WritePathChoice(
      (m) => measured.push(m),
      (e) => failed.push(e),
      (root) => {
        calls.push(root);
        const next = results.shift()!;
        return next instanceof Error ? Promise.reject(next) : Promise.resolve(next);
      },
      maxAgeMs,
      () => clock.now,
    );
    return { choice: made, clock, measured, failed, calls };
  }

  it('measures once for the imports that ask meanwhile and reports what it measured', async () => {
    const { choice: c, measured, calls } = choice([measurement(false)]);
    expect(await Promise.all([c.direct('/s'), c.direct('/s'), c.direct('/s')])).toEqual([
      false,
      false,
      false,
    ]);
    expect(calls).toEqual(['/s']);
    expect(measured).toEqual([measurement(false)]);
  });

  it('measures again once the last measurement is older than its age limit', async () => {
    const { choice: c, clock, calls } = choice([measurement(true), measurement(false)]);
    expect(await c.direct('/s')).toBe(true);
    clock.now = 999;
    expect(await c.direct('/s')).toBe(true);
    clock.now = 1000;
    expect(await c.direct('/s')).toBe(false);
    expect(calls).toHaveLength(2);
  });

  it('writes direct while a probe fails, reports the failure, and measures again at the next ask', async () => {
    const { choice: c, failed, calls } = choice([new Error('ENOSPC'), measurement(false)]);
    expect(await c.direct('/s')).toBe(true);
    expect(failed.map((e) => e.message)).toEqual(['ENOSPC']);
    expect(await c.direct('/s')).toBe(false);
    expect(calls).toHaveLength(2);
  });
});
