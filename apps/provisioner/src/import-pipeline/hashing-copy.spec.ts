import {
  appendFileSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { digest, makeSpecialFile, tempDir } from '../../test/support/dropzone-fixture';
import { FilesystemStorage } from '../storage/filesystem/filesystem-storage';
import { openLocalObject } from '../storage/local-objects';
import type { StagingArea, SyncObjectWriter } from '../storage/storage-system';
import { copyFileWithHashesSync, copyWithHashes } from './hashing-copy';

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
