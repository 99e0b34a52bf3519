import { randomBytes } from 'node:crypto';
import {
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { digest, tempDir } from '../../../test/support/dropzone-fixture';
import { cachedBytes } from '../../../test/support/page-cache';
import { FilesystemStorage } from '../../storage/filesystem/filesystem-storage';
import { StagingArea } from '../../storage/storage-system';
import { CopyResult } from './hashing-copy';
import { ImportTransientError } from '../import-errors';
import { reviveError, serializeError } from './copy-batch';
import {
  copyFilesOnThreads,
  type CopyFile,
  COPY_THREAD_ENTRY,
  RETIRE_IDLE_S3_THREADS,
  CopyThreadPool,
  ThreadedCopyRequest,
} from './copy-thread-pool';
import { REAL_IO_MS } from '../../../../../test/support/timeouts';
import { until } from '../../../../../test/support/wait';

// Real threads, files or sockets: seconds on a loaded 2-core machine.
jest.setTimeout(REAL_IO_MS);

/** Copy threads that change grow-*, touch-*, replace-* files as they read them (crash-* ends one). */
const SOURCE_CHANGING_THREAD = join(__dirname, '../../../test/support/source-changing-copy.thread');

/** Every file below `dir`, as paths relative to it. */
function filesBelow(dir: string, prefix = ''): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? filesBelow(join(dir, entry.name), `${prefix}${entry.name}/`)
      : [`${prefix}${entry.name}`],
  );
}

/** Copies `one.txt` of `sourceRoot` on the pool into a new staging area; its result. */
async function copyOneFile(
  pool: CopyThreadPool,
  storage: FilesystemStorage,
  sourceRoot: string,
): Promise<CopyResult | undefined> {
  const staging = await storage.openStaging(randomBytes(4).toString('hex'));
  let result: CopyResult | undefined;
  await copyFilesOnThreads(pool, {
    stagingId: staging.id,
    sourceRoot,
    md5: false,
    files: [{ path: 'one.txt', size: 3 }],
    prepare: (path) => staging.localFiles!.prepare(path),
    copied: (_, copied) => void (result = copied),
    bytes: () => undefined,
    stopped: () => false,
  });
  return result;
}

describe('copyFilesOnThreads (real worker threads, real filesystem)', () => {
  let dir: string;
  let storage: FilesystemStorage;
  let staging: StagingArea;
  let stagingCount = 0;

  beforeEach(async () => {
    dir = tempDir('threads');
    storage = new FilesystemStorage(join(dir, 'storage'));
    staging = await storage.openStaging(`t${++stagingCount}`);
  });

  const pool = new CopyThreadPool(2, SOURCE_CHANGING_THREAD);

  // Loading the threads' TypeScript takes seconds on a busy machine: not the tests' time.
  beforeAll(() => pool.start(), 30_000);

  afterAll(async () => {
    await pool.close();
  });

  const sourceOf = (path: string): string => join(dir, 'src', path);

  function source(files: Record<string, string | Buffer>): CopyFile[] {
    return Object.entries(files).map(([path, content]) => {
      mkdirSync(dirname(sourceOf(path)), { recursive: true });
      writeFileSync(sourceOf(path), content);
      return { path, size: Buffer.byteLength(content) };
    });
  }

  async function copy(
    files: CopyFile[],
    overrides: Partial<ThreadedCopyRequest> = {},
  ): Promise<{ results: Map<number, CopyResult>; bytes: number }> {
    const results = new Map<number, CopyResult>();
    let bytes = 0;
    await copyFilesOnThreads(pool, {
      stagingId: staging.id,
      sourceRoot: join(dir, 'src'),
      md5: true,
      files,
      prepare: (path) => staging.localFiles!.prepare(path),
      copied: (position, result) => void results.set(position, result),
      bytes: (n) => (bytes += n),
      stopped: () => false,
      ...overrides,
    });
    return { results, bytes };
  }

  it.each([
    ['through the page cache', undefined],
    ['written direct', 1024 * 1024],
  ])(
    'stops a large file %s after the chunk in flight when the signal aborts',
    async (_, direct) => {
      const big = 96 * 1024 * 1024;
      const files = source({
        'a/big.bin': Buffer.alloc(big, 1),
        'b/small.txt': 'after the big one',
      });
      const stop = new AbortController();
      let copied = 0;
      const stopped = copy(files, {
        // The threads report a large file's bytes every 16 MiB: stop at its first report. The
        // small file, on the other thread, may be reported before it (a busy machine): stopping
        // then would stop before the big file was even opened.
        bytes: (n) => {
          copied += n;
          if (n >= 1024 * 1024) stop.abort();
        },
        stopped: () => stop.signal.aborted,
        signal: stop.signal,
        directWriteMinBytes: direct,
      });
      await expect(stopped).rejects.toMatchObject({ name: 'ImportStoppedError' });
      expect(copied).toBeLessThan(big);
      // Stopped part-way through the file, not after it.
      expect(statSync(storage.absolute(`.staging/${staging.id}/a/big.bin`)).size).toBeLessThan(big);
    },
  );

  it('copies many small files in several directories, hashed, read-only, counted per file', async () => {
    const contents: Record<string, Buffer> = {};
    for (let i = 0; i < 600; i++) {
      contents[`d${i % 5}/sub${i % 2}/f-${i}.bin`] = Buffer.from(
        Array.from({ length: (i * 37) % 5000 }, (_, k) => (k * i) % 256),
      );
    }
    const files = source(contents);
    const before = pool.batchesRun;
    const { results, bytes } = await copy(files, { filesPerBatch: 16 });
    expect(results.size).toBe(600);
    files.forEach((file, position) => {
      const content = contents[file.path];
      const stats = statSync(sourceOf(file.path));
      expect(results.get(position)).toEqual({
        size: content.length,
        sha256: digest('sha256', content),
        md5: digest('md5', content),
        source: {
          ino: stats.ino,
          size: stats.size,
          mtimeMs: stats.mtimeMs,
          ctimeMs: stats.ctimeMs,
        },
      });
      const staged = storage.absolute(`.staging/${staging.id}/${file.path}`);
      expect(readFileSync(staged).equals(content)).toBe(true);
      expect(statSync(staged).mode & 0o777).toBe(0o444);
    });
    expect(bytes).toBe(Object.values(contents).reduce((sum, c) => sum + c.length, 0));
    // 600 files in batches of at most 16: they went through the threads, not around them.
    expect(pool.batchesRun - before).toBeGreaterThanOrEqual(600 / 16);
    expect(pool.threadCount).toBe(2);
    // Objects made by a thread are the area's own: sync (and publish) cover them.
    await expect(staging.sync()).resolves.toBeUndefined();
  });

  it('copies large files on the threads too, one batch each, reporting bytes while a file is copied', async () => {
    const big = (seed: number): Buffer => {
      const content = Buffer.alloc(40 * 1024 * 1024);
      for (let k = 0; k < content.length; k += 4096) content.writeUInt32LE((k * seed) >>> 0, k);
      return content;
    };
    const contents: Record<string, Buffer> = {
      'large/one.bin': big(3),
      'large/two.bin': big(7),
      'small/a.txt': Buffer.from('alpha'),
    };
    const files = source(contents);
    const reports: number[] = [];
    const before = pool.batchesRun;
    const { results } = await copy(files, { bytes: (n) => reports.push(n) });
    files.forEach((file, position) => {
      expect(results.get(position)).toMatchObject({
        sha256: digest('sha256', contents[file.path]),
      });
      const staged = storage.absolute(`.staging/${staging.id}/${file.path}`);
      expect(readFileSync(staged).equals(contents[file.path])).toBe(true);
    });
    // Two large files in a directory are two batches (both threads), plus the small one.
    expect(pool.batchesRun - before).toBe(3);
    // Progress came during each 40 MiB file (every 16 MiB), not once at its end.
    expect(reports.filter((n) => n > 0).length).toBeGreaterThanOrEqual(5);
    expect(reports.reduce((sum, n) => sum + n, 0)).toBe(80 * 1024 * 1024 + 5);
    // 80 MiB hashed and written: well under a second alone, seconds on a busy machine.
  }, 20_000);

  it('copies large files written direct while the same threads take small batches, each byte in place', async () => {
    const contents: Record<string, Buffer> = {
      'large/one.bin': randomBytes(9 * 1024 * 1024 + 77),
      'large/two.bin': randomBytes(7 * 1024 * 1024),
    };
    for (let i = 0; i < 40; i++) contents[`small-${i % 4}/f-${i}.bin`] = randomBytes(3000 + i);
    const files = source(contents);
    // Small batches: the pool queues one behind a large file on its thread, which runs it only
    // once the large file is done (they share the thread's buffers).
    const { results } = await copy(files, { directWriteMinBytes: 1024 * 1024, filesPerBatch: 4 });
    expect(results.size).toBe(files.length);
    files.forEach((file, position) => {
      expect(results.get(position)).toMatchObject({
        size: contents[file.path].length,
        sha256: digest('sha256', contents[file.path]),
        md5: digest('md5', contents[file.path]),
      });
      const staged = storage.absolute(`.staging/${staging.id}/${file.path}`);
      if (file.path.startsWith('large/')) expect(cachedBytes(staged)).toBe(0);
      expect(readFileSync(staged).equals(contents[file.path])).toBe(true);
    });
  });

  it.each([
    ['grow-a.bin', 'size 3145728 -> 3145738'],
    ['touch-a.bin', 'modified while being read'],
    ['replace-a.bin', 'replaced or removed while being read'],
  ])(
    'fails with source_changed when %s, written direct, changes after its first chunk',
    async (name, what) => {
      const files = source({ [`x/${name}`]: randomBytes(3 * 1024 * 1024) });
      const error = await copy(files, { directWriteMinBytes: 1024 * 1024 }).catch(
        (e: unknown) => e,
      );
      expect(error).toMatchObject({
        code: 'source_changed',
        details: [{ path: `x/${name}`, message: expect.stringContaining(what) }],
      });
    },
  );

  it.each([
    ['grow-a.txt', 'size 5 -> 15'],
    ['touch-a.txt', 'modified while being read'],
    ['replace-a.txt', 'replaced or removed while being read'],
  ])(
    'fails with source_changed, details included, when %s changes while a thread reads it',
    async (name, what) => {
      const files = source({ 'x/ok.txt': 'fine', [`x/${name}`]: 'alpha' });
      const error = await copy(files).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ImportTransientError);
      expect(error).toMatchObject({
        code: 'source_changed',
        details: [
          { code: 'source_changed', path: `x/${name}`, message: expect.stringContaining(what) },
        ],
      });
    },
  );

  it('fails with source_changed when a file was replaced by a symlink after preflight', async () => {
    const files = source({ 'a/link.txt': 'x' });
    rmSync(sourceOf('a/link.txt'));
    symlinkSync('/etc/hostname', sourceOf('a/link.txt'));
    await expect(copy(files)).rejects.toMatchObject({
      name: 'ImportTransientError',
      code: 'source_changed',
      details: [expect.objectContaining({ path: 'a/link.txt', message: 'replaced by a symlink' })],
    });
  });

  it('reports a staging area removed underneath as staging_lost, never re-creating it', async () => {
    const files = source({ 'deep/er/a.txt': 'alpha' });
    // Its directories are made (prepare) before the thread creates the file.
    const prepare = (path: string): string => {
      const at = staging.localFiles!.prepare(path);
      rmSync(storage.absolute(`.staging/${staging.id}`), { recursive: true });
      return at;
    };
    await expect(copy(files, { prepare })).rejects.toMatchObject({
      name: 'StagingLostError',
      code: 'staging_lost',
      id: staging.id,
    });
    expect(await storage.listStaging()).toEqual([]);
  });

  it('passes system errors on with their code, errno, syscall and message', async () => {
    const files = source({ 'twice.txt': 'once' });
    await copy(files);
    // A second object at the same path: the exclusive create in the thread refuses it.
    const error = await copy(files).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'EEXIST', syscall: 'open', errno: expect.any(Number) });
    expect((error as Error).message).toMatch(/^EEXIST: file already exists, open .*twice\.txt'$/);
  });

  it('stops sending batches after the first failure and returns only once nothing is in flight', async () => {
    const contents: Record<string, string> = { 'a/grow-first.txt': 'alpha' };
    for (let i = 0; i < 2000; i++) contents[`${'abcd'[i % 4]}/f-${i}.txt`] = `file ${i}`;
    const files = source(contents);
    const sentBefore = pool.batchesRun;
    const error = await copy(files, { filesPerBatch: 8 }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'source_changed' });
    // Every batch sent has been answered when the copy returns: a thread writes only while it
    // works on a batch, so nothing can land in staging afterwards.
    expect(pool.inFlight).toBe(0);
    // At most the batches already sent when the failure came back (2 threads x 2 x 8 files),
    // plus those answered before it: far from all 2001.
    const answered = pool.batchesRun - sentBefore;
    expect(answered).toBeLessThan(25);
    expect(filesBelow(storage.absolute(`.staging/${staging.id}`)).length).toBeLessThanOrEqual(
      answered * 8,
    );
  });

  it('sends nothing once the caller says another copy failed', async () => {
    const files = source({ 'a/one.txt': '1', 'b/two.txt': '2' });
    const { results } = await copy(files, { stopped: () => true });
    expect(results.size).toBe(0);
    expect(filesBelow(storage.absolute(`.staging/${staging.id}`))).toEqual([]);
  });

  it('fails the batches of a thread that died; the pool replaces it', async () => {
    await pool.start();
    const failed = await copy(source({ 'c/crash-now.txt': 'boom' })).catch((e: unknown) => e);
    expect((failed as Error).message).toBe('copy thread exited with code 3');
    expect(pool.threadCount).toBe(1);
    const { results } = await copy(source({ 'c/after.txt': 'fine', 'd/other.txt': 'also' }));
    expect(results.get(0)).toMatchObject({ size: 4, sha256: digest('sha256', 'fine') });
    await pool.start();
    expect(pool.threadCount).toBe(2);
  });
});

describe('CopyThreadPool memory', () => {
  it('on S3 ends every thread that has worked once idle, as the grown pool below does', () => {
    expect(RETIRE_IDLE_S3_THREADS).toMatchObject({ idleMs: 2000, heapGrowth: -Infinity });
  });

  it('endIdle ends the threads without a batch at once, and the next batch starts another', async () => {
    const dir = tempDir('end-idle');
    const storage = new FilesystemStorage(join(dir, 'storage'));
    mkdirSync(join(dir, 'src'));
    writeFileSync(join(dir, 'src', 'one.txt'), 'one');
    const pool = new CopyThreadPool(1);
    const copyOne = () => copyOneFile(pool, storage, join(dir, 'src'));
    try {
      expect(await copyOne()).toMatchObject({ size: 3 });
      expect(pool.threadCount).toBe(1);
      pool.endIdle();
      expect(pool.threadCount).toBe(0);
      expect(await copyOne()).toMatchObject({ size: 3, sha256: digest('sha256', 'one') });
      expect(pool.threadsStarted).toBe(2);
    } finally {
      await pool.close();
    }
  });

  it('ends a thread idle past the bound once its heap grew past it, one under it stays, and a new one takes the next batch', async () => {
    const dir = tempDir('retire');
    const storage = new FilesystemStorage(join(dir, 'storage'));
    mkdirSync(join(dir, 'src'));
    writeFileSync(join(dir, 'src', 'one.txt'), 'one');
    const idleMs = 200;
    // Every thread has grown past minus infinity; none by a terabyte.
    const drainHeapGrowth = Infinity;
    const grown = new CopyThreadPool(1, COPY_THREAD_ENTRY, {
      idleMs,
      heapGrowth: -Infinity,
      drainHeapGrowth,
    });
    const small = new CopyThreadPool(1, COPY_THREAD_ENTRY, {
      idleMs,
      heapGrowth: 2 ** 40,
      drainHeapGrowth,
    });
    const copyOn = (pool: CopyThreadPool) => copyOneFile(pool, storage, join(dir, 'src'));
    try {
      // `small` goes idle first: with the same idleMs its timer would fire before `grown`'s.
      expect(await copyOn(small)).toMatchObject({ size: 3, sha256: digest('sha256', 'one') });
      expect(await copyOn(grown)).toMatchObject({ size: 3 });
      expect(grown.threadCount).toBe(1);
      await until(
        () => grown.threadCount === 0,
        'the idle thread past the bound to end',
        REAL_IO_MS,
      );
      expect(small.threadCount).toBe(1);
      expect(await copyOn(grown)).toMatchObject({ size: 3, sha256: digest('sha256', 'one') });
      expect(grown.threadCount).toBe(1);
    } finally {
      await Promise.all([grown.close(), small.close()]);
    }
  });
  it('drains a thread grown past the drain bound mid-copy: no new batch, ended between files through end(), a new one copies the rest', async () => {
    const dir = tempDir('drain');
    const storage = new FilesystemStorage(join(dir, 'storage'));
    const names = Array.from({ length: 12 }, (_, i) => `d${i % 3}/f${i}.txt`);
    for (const name of names) {
      mkdirSync(join(dir, 'src', dirname(name)), { recursive: true });
      writeFileSync(join(dir, 'src', name), name);
    }
    // Every thread has grown past minus infinity: each is drained after its first answer.
    const pool = new CopyThreadPool(2, COPY_THREAD_ENTRY, {
      idleMs: 60_000,
      heapGrowth: 2 ** 40,
      drainHeapGrowth: -Infinity,
    });
    const ended: number[] = [];
    const end = (pool as unknown as { end(t: { id: number }): Promise<void> }).end.bind(pool);
    (pool as unknown as { end(t: { id: number }): Promise<void> }).end = (thread) => {
      ended.push(thread.id);
      return end(thread);
    };
    try {
      const staging = await storage.openStaging(randomBytes(4).toString('hex'));
      const results = new Map<number, CopyResult>();
      await copyFilesOnThreads(pool, {
        stagingId: staging.id,
        sourceRoot: join(dir, 'src'),
        md5: false,
        files: names.map((path) => ({ path, size: path.length })),
        prepare: (path) => staging.localFiles!.prepare(path),
        copied: (position, copied) => void results.set(position, copied),
        bytes: () => undefined,
        stopped: () => false,
        filesPerBatch: 2,
      });
      expect(results.size).toBe(names.length);
      names.forEach((name, i) =>
        expect(results.get(i)).toMatchObject({ sha256: digest('sha256', name) }),
      );
      // Six batches of two files, at most two queued on a thread before its first answer:
      // threads were replaced along the way, and each drained one ended by the pool's one route
      // (a replacement started for a pick that found nothing left stays, undrained).
      expect(pool.batchesRun).toBe(6);
      expect(pool.threadsStarted).toBeGreaterThanOrEqual(3);
      await until(
        () => ended.length + pool.threadCount === pool.threadsStarted,
        'the drained threads to end',
        REAL_IO_MS,
      );
      expect(new Set(ended).size).toBe(ended.length);
      expect(pool.threadCount).toBeLessThanOrEqual(2);
    } finally {
      await pool.close();
    }
  });
});

describe('errors crossing the thread boundary', () => {
  it('keep a system error its code, errno, syscall, path and message', () => {
    const original = Object.assign(new Error('ENOSPC: no space left on device, write'), {
      code: 'ENOSPC',
      errno: -28,
      syscall: 'write',
      path: '/x',
    });
    const revived = reviveError(JSON.parse(JSON.stringify(serializeError(original))));
    expect(revived).toMatchObject({
      message: original.message,
      code: 'ENOSPC',
      errno: -28,
      syscall: 'write',
      path: '/x',
    });
  });

  it('keep ImportTransientError its class, code and details', () => {
    const original = new ImportTransientError('source_changed', 'changed', [
      { code: 'source_changed', path: 'a', message: 'disappeared' },
    ]);
    const revived = reviveError(serializeError(original));
    expect(revived).toBeInstanceOf(ImportTransientError);
    expect(revived).toMatchObject({ code: 'source_changed', details: original.details });
  });
});
