import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import {
  appendFileSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  truncateSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { digest, makeSpecialFile, tempDir } from '../../../test/support/dropzone-fixture';
import { FilesystemStorage } from '../../storage/filesystem/filesystem-storage';
import { allocAligned, openLocalObject } from '../../storage/local-objects';
import type {
  DirectObjectWriter,
  StagingArea,
  SyncObjectWriter,
} from '../../storage/storage-system';
import { cachedBytes } from '../../../test/support/page-cache';
import {
  copyFileWithHashesOverlapped,
  DIRECT_WRITE_BUFFERS,
  copyFileWithHashesSync,
  copyWithHashes,
} from './hashing-copy';

/** An object of a filesystem staging area, created in blocking calls as a copy thread does. */
function localObject(staging: StagingArea, path: string): SyncObjectWriter {
  return openLocalObject(staging.localFiles!.prepare(path), staging.id);
}

/**
 * Returns once the file system's clock has moved past `path`'s change time (it ticks coarsely,
 * every few ms): a change made after this gives the file another ctime.
 */
async function waitForNextTick(path: string): Promise<void> {
  const probe = `${path}.probe`;
  const deadline = Date.now() + 5_000;
  for (;;) {
    writeFileSync(probe, '');
    if (statSync(probe).ctimeMs > statSync(path).ctimeMs) return rmSync(probe);
    if (Date.now() > deadline) throw new Error('the file system clock did not move in 5 s');
    await new Promise((resolve) => setImmediate(resolve));
  }
}

const buffers = (size: number): [Buffer, Buffer, Buffer] => [
  Buffer.alloc(size),
  Buffer.alloc(size),
  Buffer.alloc(size),
];

/** What a copy records of its source: a later attempt compares it before keeping the copy. */
function sourceIdentity(path: string): {
  ino: number;
  size: number;
  mtimeMs: number;
  ctimeMs: number;
} {
  const stats = statSync(path);
  return { ino: stats.ino, size: stats.size, mtimeMs: stats.mtimeMs, ctimeMs: stats.ctimeMs };
}

describe('copyWithHashes', () => {
  let dir: string;
  let storage: FilesystemStorage;
  beforeEach(() => {
    dir = tempDir('copy');
    storage = new FilesystemStorage(join(dir, 'storage'));
  });

  it('copies byte for byte across many small buffers and hashes in the same pass', async () => {
    const content = Buffer.from(Array.from({ length: 100_000 }, (_, i) => i % 251));
    writeFileSync(join(dir, 'src.bin'), content);
    const staging = await storage.openStaging('imp1');
    let seen = 0;
    const result = await copyWithHashes(
      join(dir, 'src.bin'),
      'src.bin',
      await staging.createObject('x/y.bin'),
      { md5: true, buffers: buffers(4096), onBytes: (n) => (seen += n) },
    );
    expect(result).toEqual({
      size: content.length,
      sha256: digest('sha256', content),
      md5: digest('md5', content),
      source: sourceIdentity(join(dir, 'src.bin')),
    });
    expect(seen).toBe(content.length);
    expect(readFileSync(join(dir, 'storage/.staging/imp1/x/y.bin')).equals(content)).toBe(true);
  });

  it('copies an empty file', async () => {
    writeFileSync(join(dir, 'empty'), '');
    const staging = await storage.openStaging('imp2');
    const result = await copyWithHashes(
      join(dir, 'empty'),
      'empty',
      await staging.createObject('empty'),
      { md5: false, buffers: buffers(16) },
    );
    expect(result).toEqual({
      size: 0,
      sha256: digest('sha256', ''),
      md5: null,
      source: sourceIdentity(join(dir, 'empty')),
    });
  });

  it('fails as a retryable source_changed when the file grows while it is read', async () => {
    writeFileSync(join(dir, 'growing'), Buffer.alloc(64 * 1024, 1));
    const staging = await storage.openStaging('imp3');
    let appended = false;
    const copy = copyWithHashes(
      join(dir, 'growing'),
      'growing',
      await staging.createObject('growing'),
      {
        md5: false,
        buffers: buffers(1024),
        afterChunk: () => {
          if (!appended) appendFileSync(join(dir, 'growing'), 'more');
          appended = true;
          return Promise.resolve();
        },
      },
    );
    await expect(copy).rejects.toMatchObject({
      name: 'ImportTransientError',
      code: 'source_changed',
    });
  });

  it('refuses to follow a symlink that replaced a file after preflight, and aborts the object', async () => {
    writeFileSync(join(dir, 'real'), 'x');
    symlinkSync(join(dir, 'real'), join(dir, 'link'));
    const staging = await storage.openStaging('imp4');
    const writer = await staging.createObject('link');
    const abort = writer.abort.bind(writer);
    let aborted = false;
    writer.abort = () => ((aborted = true), abort());
    await expect(
      copyWithHashes(join(dir, 'link'), 'link', writer, { md5: false, buffers: buffers(16) }),
    ).rejects.toMatchObject({ code: 'source_changed' });
    expect(aborted).toBe(true);
  });

  it('fails at once, without blocking on the open, when a FIFO replaced the file after preflight', async () => {
    makeSpecialFile(join(dir, 'pipe'), 'fifo');
    const staging = await storage.openStaging('imp5');
    await expect(
      copyWithHashes(join(dir, 'pipe'), 'pipe', await staging.createObject('pipe'), {
        md5: false,
        buffers: buffers(16),
      }),
    ).rejects.toMatchObject({
      code: 'source_changed',
      message: expect.stringContaining('regular'),
    });
  });

  it('fails when the path now leads to another file than the one preflight walked', async () => {
    writeFileSync(join(dir, 'planned'), 'mine');
    const planned = statSync(join(dir, 'planned'));
    // What a directory swapped for a link does: the same path, another inode.
    renameSync(join(dir, 'planned'), join(dir, 'moved'));
    writeFileSync(join(dir, 'planned'), 'theirs');
    const staging = await storage.openStaging('imp6');
    await expect(
      copyWithHashes(join(dir, 'planned'), 'planned', await staging.createObject('planned'), {
        md5: false,
        buffers: buffers(16),
        identity: { dev: planned.dev, ino: planned.ino },
      }),
    ).rejects.toMatchObject({
      code: 'source_changed',
      message: expect.stringContaining('not the file preflight found'),
    });
  });
});

describe('copyWithHashes when the storage write fails (disk full)', () => {
  it('rejects with the write error, aborts, and has a handler on the write before it can fail', async () => {
    const dir = tempDir('copy-enospc');
    writeFileSync(join(dir, 'src.bin'), Buffer.alloc(64 * 1024, 7));
    // A write that fails while copyWithHashes is busy with the next chunk. Without a handler
    // attached by then, Node reports an unhandled rejection and the worker process dies instead
    // of failing the attempt (seen with ENOSPC on a full disk).
    const handledWhenFailing: boolean[] = [];
    let aborted = false;
    const writer = {
      write: () => {
        let handled = false;
        const write = new Promise<void>((_, fail) =>
          setTimeout(() => {
            handledWhenFailing.push(handled);
            fail(Object.assign(new Error('no space left on device'), { code: 'ENOSPC' }));
          }, 5),
        );
        // `await` does not go through .then; an explicit .catch/.then does.
        const then = write.then.bind(write);
        write.then = ((...args: Parameters<typeof then>) => {
          handled = true;
          return then(...args);
        }) as typeof write.then;
        return write;
      },
      commit: async () => undefined,
      abort: async () => {
        aborted = true;
      },
    };
    await expect(
      copyWithHashes(join(dir, 'src.bin'), 'src.bin', writer, {
        md5: false,
        buffers: buffers(4096),
        afterChunk: () => new Promise((done) => setTimeout(done, 30)),
      }),
    ).rejects.toMatchObject({ code: 'ENOSPC' });
    expect(aborted).toBe(true);
    expect(handledWhenFailing).toEqual([true]);
  });
});

describe('copyFileWithHashesSync (blocking calls)', () => {
  let dir: string;
  let storage: FilesystemStorage;
  beforeEach(() => {
    dir = tempDir('copy-sync');
    storage = new FilesystemStorage(join(dir, 'storage'));
  });

  it('copies byte for byte in several chunks and hashes in the same pass', async () => {
    const content = Buffer.from(Array.from({ length: 10_000 }, (_, i) => i % 253));
    writeFileSync(join(dir, 'src.bin'), content);
    const staging = await storage.openStaging('s1');
    let seen = 0;
    const result = copyFileWithHashesSync(
      join(dir, 'src.bin'),
      'src.bin',
      localObject(staging, 'a/b/c.bin'),
      { md5: true, buffer: Buffer.alloc(1000), onBytes: (n) => (seen += n) },
    );
    expect(result).toEqual({
      size: content.length,
      sha256: digest('sha256', content),
      md5: digest('md5', content),
      source: sourceIdentity(join(dir, 'src.bin')),
    });
    expect(seen).toBe(content.length);
    expect(readFileSync(join(dir, 'storage/.staging/s1/a/b/c.bin')).equals(content)).toBe(true);
  });

  it('fails as source_changed when the file grows while it is read, and aborts the object', async () => {
    writeFileSync(join(dir, 'growing'), Buffer.alloc(4096, 1));
    const staging = await storage.openStaging('s2');
    const writer = localObject(staging, 'growing');
    let aborted = false;
    const abort = writer.abort.bind(writer);
    writer.abort = () => {
      aborted = true;
      abort();
    };
    let appended = false;
    expect(() =>
      copyFileWithHashesSync(join(dir, 'growing'), 'growing', writer, {
        md5: false,
        buffer: Buffer.alloc(1024),
        afterChunk: () => {
          if (!appended) appendFileSync(join(dir, 'growing'), 'more');
          appended = true;
        },
      }),
    ).toThrow(expect.objectContaining({ name: 'ImportTransientError', code: 'source_changed' }));
    expect(aborted).toBe(true);
  });

  // Same size and mtime after each change: only the descriptor's link count or change time
  // tells (the check no longer looks the path up again).
  it.each([
    ['moved away', (path: string) => renameSync(path, `${path}.moved`)],
    ['removed', (path: string) => rmSync(path)],
    [
      'replaced by a rename over it',
      (path: string) => {
        writeFileSync(`${path}.new`, Buffer.alloc(2048, 5));
        utimesSync(`${path}.new`, statSync(path).atime, statSync(path).mtime);
        renameSync(`${path}.new`, path);
      },
    ],
  ])('fails as source_changed when the file is %s while it is read', async (_, change) => {
    const path = join(dir, 'victim');
    writeFileSync(path, Buffer.alloc(2048, 4));
    // An old change time, as a deposited file has: a change now cannot fall in the same tick.
    utimesSync(path, new Date(2020, 0, 1), new Date(2020, 0, 1));
    await waitForNextTick(path);
    const staging = await storage.openStaging(`s-${Math.random().toString(36).slice(2)}`);
    let changed = false;
    expect(() =>
      copyFileWithHashesSync(path, 'victim', localObject(staging, 'victim'), {
        md5: false,
        buffer: Buffer.alloc(1024),
        afterChunk: () => {
          if (!changed) change(path);
          changed = true;
        },
      }),
    ).toThrow(
      expect.objectContaining({
        code: 'source_changed',
        message: expect.stringContaining('replaced or removed while being read'),
      }),
    );
  });

  it('refuses to follow a symlink that replaced a file after preflight', async () => {
    writeFileSync(join(dir, 'real'), 'x');
    symlinkSync(join(dir, 'real'), join(dir, 'link'));
    const staging = await storage.openStaging('s3');
    expect(() =>
      copyFileWithHashesSync(join(dir, 'link'), 'link', localObject(staging, 'link'), {
        md5: false,
        buffer: Buffer.alloc(16),
      }),
    ).toThrow(expect.objectContaining({ code: 'source_changed' }));
  });

  it('fails at once when a FIFO, or another file, replaced the one preflight walked', async () => {
    makeSpecialFile(join(dir, 'pipe'), 'fifo');
    writeFileSync(join(dir, 'other'), 'x');
    const staging = await storage.openStaging('s5');
    expect(() =>
      copyFileWithHashesSync(join(dir, 'pipe'), 'pipe', localObject(staging, 'pipe'), {
        md5: false,
        buffer: Buffer.alloc(16),
      }),
    ).toThrow(expect.objectContaining({ code: 'source_changed' }));
    expect(() =>
      copyFileWithHashesSync(join(dir, 'other'), 'other', localObject(staging, 'other'), {
        md5: false,
        buffer: Buffer.alloc(16),
        identity: { dev: 0, ino: 1 },
      }),
    ).toThrow(expect.objectContaining({ code: 'source_changed' }));
  });

  it('reports a staging area removed underneath as staging_lost, never re-creating it', async () => {
    const staging = await storage.openStaging('s4');
    rmSync(join(dir, 'storage/.staging/s4'), { recursive: true });
    expect(() => localObject(staging, 'deep/file')).toThrow(
      expect.objectContaining({ code: 'staging_lost' }),
    );
    expect(await storage.listStaging()).toEqual([]);
  });
});

describe('copyFileWithHashesOverlapped (files written direct)', () => {
  const CHUNK = 64 * 1024;
  let dir: string;
  let storage: FilesystemStorage;
  let staging: StagingArea;
  let areas = 0;
  beforeEach(async () => {
    dir = tempDir('copy-overlapped');
    storage = new FilesystemStorage(join(dir, 'storage'));
    staging = await storage.openStaging(`o${++areas}`);
  });

  const someBuffers = (count = DIRECT_WRITE_BUFFERS): Buffer[] =>
    Array.from({ length: count }, () => allocAligned(CHUNK));

  /** A staged object created direct, as a copy thread creates a large file. */
  function directObject(path: string): DirectObjectWriter {
    const writer = openLocalObject(staging.localFiles!.prepare(path), staging.id, true);
    if (!writer.direct) throw new Error('this filesystem refused O_DIRECT');
    return writer;
  }

  const staged = (path: string): string => join(dir, `storage/.staging/${staging.id}/${path}`);

  it.each(
    [3, DIRECT_WRITE_BUFFERS].flatMap((count) =>
      [
        ['an empty file', 0],
        ['less than a block', 100],
        ['one byte short of a chunk', CHUNK - 1],
        ['exactly a chunk', CHUNK],
        ['one byte past a chunk', CHUNK + 1],
        ['several chunks and an odd tail', 5 * CHUNK + 4097],
        ['more chunks than buffers, whole', 4 * count * CHUNK],
      ].map(([what, size]) => [what as string, size as number, count] as const),
    ),
  )(
    'copies %s (%i bytes, %i buffers) byte for byte past the page cache, with its SHA-256 and MD5',
    async (_, size, count) => {
      const content = randomBytes(size);
      writeFileSync(join(dir, 'src.bin'), content);
      let seen = 0;
      const result = await copyFileWithHashesOverlapped(
        join(dir, 'src.bin'),
        'src.bin',
        directObject('d/src.bin'),
        { md5: true, buffers: someBuffers(count), onBytes: (n) => (seen += n) },
      );
      expect(result).toEqual({
        size,
        sha256: digest('sha256', content),
        md5: digest('md5', content),
        source: sourceIdentity(join(dir, 'src.bin')),
      });
      expect(seen).toBe(size);
      expect(cachedBytes(staged('d/src.bin'))).toBe(0);
      expect(readFileSync(staged('d/src.bin')).equals(content)).toBe(true);
      expect(statSync(staged('d/src.bin')).mode & 0o777).toBe(0o444);
    },
  );

  /**
   * A writer whose writes take a few milliseconds and record when they start and end, and
   * which checks that nobody touched a chunk's memory while it was being written.
   */
  function slowWriter(events: string[], fail?: NodeJS.ErrnoException) {
    const written: Buffer[] = [];
    let inFlight = 0;
    const writer = {
      abortedWithWriteInFlight: null as boolean | null,
      direct: true as const,
      written,
      write: (chunk: Uint8Array) => void written.push(Buffer.from(chunk)),
      writeInBackground: (chunk: Uint8Array): Promise<void> => {
        const k = written.length;
        const copy = Buffer.from(chunk);
        written.push(copy);
        events.push(`write ${k} started`);
        inFlight += 1;
        return new Promise<void>((resolve, reject) =>
          setTimeout(() => {
            inFlight -= 1;
            events.push(`write ${k} done`);
            if (!copy.equals(chunk)) reject(new Error(`chunk ${k} changed while written`));
            else if (fail && k === 1) reject(fail);
            else resolve();
          }, 20),
        );
      },
      commit: () => undefined,
      abort: () => {
        writer.abortedWithWriteInFlight = inFlight > 0;
      },
    };
    return writer;
  }

  /** Records when each read of the source (on libuv's pool) starts and ends among `events`. */
  function recordReads(events: string[]): jest.SpyInstance {
    const nodeFs = jest.requireActual<typeof fs>('node:fs');
    const real = nodeFs.read as (...args: unknown[]) => void;
    let reads = 0;
    return jest.spyOn(nodeFs, 'read').mockImplementation(((...args: unknown[]) => {
      const k = reads++;
      events.push(`read ${k} started`);
      const callback = args[args.length - 1] as (...result: unknown[]) => void;
      real(...args.slice(0, -1), (...result: unknown[]) => {
        events.push(`read ${k} done`);
        callback(...result);
      });
    }) as typeof nodeFs.read);
  }

  it.each([3, DIRECT_WRITE_BUFFERS])(
    'with %i buffers, writes chunks side by side while the next is read, never reusing a buffer still being written',
    async (count) => {
      const chunks = 4 * count + 1;
      const content = randomBytes((chunks - 1) * CHUNK + 10);
      writeFileSync(join(dir, 'src.bin'), content);
      const events: string[] = [];
      const writer = slowWriter(events);
      const spy = recordReads(events);
      try {
        const result = await copyFileWithHashesOverlapped(join(dir, 'src.bin'), 'src.bin', writer, {
          md5: false,
          buffers: someBuffers(count),
        });
        expect(result.sha256).toBe(digest('sha256', content));
      } finally {
        spy.mockRestore();
      }
      // Every chunk reached the writer unchanged (slowWriter fails a chunk whose memory changed
      // while it was written), in order.
      expect(Buffer.concat(writer.written).equals(content)).toBe(true);
      const at = (event: string) => {
        const index = events.indexOf(event);
        expect(index).toBeGreaterThanOrEqual(0);
        return index;
      };
      for (let k = 0; k + 1 < chunks; k++) {
        // Reads go one at a time, in file order.
        expect(at(`read ${k + 1} started`)).toBeGreaterThan(at(`read ${k} done`));
        // A chunk's buffer is read into again only once its last chunk's write has ended.
        if (k + 1 >= count)
          expect(at(`read ${k + 1} started`)).toBeGreaterThan(at(`write ${k + 1 - count} done`));
      }
      // Writes overlap (each takes 20 ms here, reading and hashing a 64 KiB chunk far less), and
      // never more of them than there are buffers.
      let inFlight = 0;
      let most = 0;
      for (const event of events) {
        if (/^write \d+ started$/.test(event)) most = Math.max(most, ++inFlight);
        if (/^write \d+ done$/.test(event)) inFlight -= 1;
      }
      expect(most).toBeGreaterThanOrEqual(2);
      expect(most).toBeLessThanOrEqual(count);
    },
  );

  it('fails with the write error, once no write is in flight, when a write fails (disk full)', async () => {
    writeFileSync(join(dir, 'src.bin'), randomBytes(8 * DIRECT_WRITE_BUFFERS * CHUNK));
    const events: string[] = [];
    const enospc = Object.assign(new Error('ENOSPC: no space left on device, write'), {
      code: 'ENOSPC',
    });
    const writer = slowWriter(events, enospc);
    await expect(
      copyFileWithHashesOverlapped(join(dir, 'src.bin'), 'src.bin', writer, {
        md5: false,
        buffers: someBuffers(),
      }),
    ).rejects.toMatchObject({ code: 'ENOSPC' });
    expect(writer.abortedWithWriteInFlight).toBe(false);
    // Chunk 1's write fails: the writes already in flight end, and none starts after it.
    const failed = events.indexOf('write 1 done');
    expect(failed).toBeGreaterThan(0);
    expect(events.slice(failed).filter((event) => event.endsWith('started'))).toEqual([]);
    expect(writer.written.length).toBeLessThanOrEqual(DIRECT_WRITE_BUFFERS + 1);
  });

  it('stops after the chunk in flight when asked, the object aborted once its write has ended', async () => {
    writeFileSync(join(dir, 'src.bin'), randomBytes(8 * CHUNK));
    const events: string[] = [];
    const writer = slowWriter(events);
    let chunks = 0;
    await expect(
      copyFileWithHashesOverlapped(join(dir, 'src.bin'), 'src.bin', writer, {
        md5: false,
        buffers: someBuffers(),
        stopRequested: () => ++chunks >= 2,
      }),
    ).rejects.toMatchObject({ name: 'ImportStoppedError' });
    expect(writer.written).toHaveLength(2);
    expect(writer.abortedWithWriteInFlight).toBe(false);

    // And on a real direct object: the staged file holds only what was written.
    let realChunks = 0;
    await expect(
      copyFileWithHashesOverlapped(join(dir, 'src.bin'), 'src.bin', directObject('stopped.bin'), {
        md5: false,
        buffers: someBuffers(),
        stopRequested: () => ++realChunks >= 3,
      }),
    ).rejects.toMatchObject({ name: 'ImportStoppedError' });
    expect(statSync(staged('stopped.bin')).size).toBe(3 * CHUNK);
  });

  it.each([
    ['grows', (path: string) => appendFileSync(path, 'late bytes'), 'size'],
    ['shrinks', (path: string) => truncateSync(path, CHUNK + 5), 'size'],
    [
      'is modified in place',
      (path: string) => {
        const later = new Date(Date.now() + 5_000);
        utimesSync(path, later, later);
      },
      'modified while being read',
    ],
    ['is removed', (path: string) => rmSync(path), 'replaced or removed while being read'],
  ])('fails as source_changed when the file %s while it is read', async (_, change, what) => {
    const path = join(dir, 'victim.bin');
    writeFileSync(path, randomBytes(4 * CHUNK + 7));
    utimesSync(path, new Date(2020, 0, 1), new Date(2020, 0, 1));
    await waitForNextTick(path);
    let changed = false;
    await expect(
      copyFileWithHashesOverlapped(path, 'victim.bin', directObject('victim.bin'), {
        md5: false,
        buffers: someBuffers(),
        afterChunk: () => {
          if (!changed) change(path);
          changed = true;
        },
      }),
    ).rejects.toMatchObject({
      name: 'ImportTransientError',
      code: 'source_changed',
      message: expect.stringContaining(what),
    });
  });

  it('refuses a source that is not the file preflight walked, aborting the object', async () => {
    writeFileSync(join(dir, 'other.bin'), randomBytes(CHUNK));
    const writer = slowWriter([]);
    await expect(
      copyFileWithHashesOverlapped(join(dir, 'other.bin'), 'other.bin', writer, {
        md5: false,
        buffers: someBuffers(),
        identity: { dev: 0, ino: 1 },
      }),
    ).rejects.toMatchObject({ code: 'source_changed' });
    expect(writer.abortedWithWriteInFlight).toBe(false);
    expect(writer.written).toEqual([]);
  });
});
