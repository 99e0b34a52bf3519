import { createHash, randomBytes } from 'node:crypto';
import type { RemoteDataset } from '../sources/source-system';
import type { ObjectWriter, StagingArea } from '../storage/storage-system';
import { ImportStoppedError } from './import-errors';
import { copyRemoteObject, LEAN_COPY_BELOW, WRITE_BYTES } from './remote-copy';

const KiB = 1024;
const MiB = 1024 * KiB;

/** A remote dataset of one object, read in chunks of `chunkBytes` (a socket's reads). */
function remoteOf(content: Buffer, chunkBytes: number): RemoteDataset {
  return {
    read: async function* () {
      for (let at = 0; at < content.length; at += chunkBytes)
        yield content.subarray(at, at + chunkBytes);
    },
    copySource: () => null,
  } as unknown as RemoteDataset;
}

/**
 * A staging area whose writer keeps what it is given (a writev's chunks as one entry), checks it
 * is never asked to write while a write is in flight, and, with `vectored: false`, has no writev;
 * `failAt` makes the write of that index reject.
 */
function stagingOf(options: { failAt?: number; vectored?: boolean } = {}) {
  const writes: Buffer[] = [];
  let inFlight = false;
  let overlapped = false;
  let outcome: 'open' | 'committed' | 'aborted' = 'open';
  const take = async (bytes: Buffer) => {
    if (inFlight) overlapped = true;
    inFlight = true;
    await new Promise((resolve) => setImmediate(resolve));
    inFlight = false;
    if (writes.length === options.failAt) throw new Error('disk full');
    writes.push(bytes);
  };
  const writer: ObjectWriter = {
    write: (chunk) => take(Buffer.from(chunk)),
    writev:
      options.vectored === false
        ? undefined
        : (chunks) => take(Buffer.concat(chunks.map((c) => Buffer.from(c)))),
    async commit() {
      if (inFlight) overlapped = true;
      outcome = 'committed';
    },
    async abort() {
      if (inFlight) overlapped = true;
      outcome = 'aborted';
    },
  };
  const staging = { createObject: async () => writer } as unknown as StagingArea;
  return { staging, writes, overlapped: () => overlapped, outcome: () => outcome };
}

const file = (content: Buffer) => ({
  path: 'large/reads.bam',
  size: content.length,
  etag: 'e',
  source: { ino: 1, size: content.length, mtimeMs: 0, ctimeMs: 0 },
});

describe('copyRemoteObject into a writer', () => {
  it('writes the bytes in order, WRITE_BYTES a writev, one write at a time, and hashes them all', async () => {
    const content = randomBytes(3 * WRITE_BYTES + 100 * KiB);
    const { staging, writes, overlapped, outcome } = stagingOf();
    const { result } = await copyRemoteObject(remoteOf(content, 64 * KiB), file(content), staging, {
      md5: true,
      serverSide: false,
    });
    expect(Buffer.concat(writes).equals(content)).toBe(true);
    expect(writes.slice(0, -1).every((w) => w.length === WRITE_BYTES)).toBe(true);
    expect(writes).toHaveLength(4);
    expect(overlapped()).toBe(false);
    expect(outcome()).toBe('committed');
    expect(result.size).toBe(content.length);
    expect(result.sha256).toBe(createHash('sha256').update(content).digest('hex'));
    expect(result.md5).toBe(createHash('md5').update(content).digest('hex'));
  });

  it('hands a chunk of WRITE_BYTES or more over as it is', async () => {
    const content = randomBytes(2 * WRITE_BYTES);
    const { staging, writes } = stagingOf();
    await copyRemoteObject(remoteOf(content, WRITE_BYTES), file(content), staging, {
      md5: false,
      serverSide: false,
    });
    expect(writes.map((w) => w.length)).toEqual([WRITE_BYTES, WRITE_BYTES]);
  });

  it('writes chunk by chunk, in order, to a writer without writev', async () => {
    const content = randomBytes(WRITE_BYTES + 100 * KiB);
    const { staging, writes, overlapped } = stagingOf({ vectored: false });
    await copyRemoteObject(remoteOf(content, 64 * KiB), file(content), staging, {
      md5: false,
      serverSide: false,
    });
    expect(Buffer.concat(writes).equals(content)).toBe(true);
    expect(writes.every((w) => w.length === 64 * KiB || w === writes[writes.length - 1])).toBe(
      true,
    );
    expect(overlapped()).toBe(false);
  });

  it('fails with a failed write, after it settled, and aborts the object', async () => {
    const content = randomBytes(4 * WRITE_BYTES);
    const { staging, overlapped, outcome } = stagingOf({ failAt: 1 });
    await expect(
      copyRemoteObject(remoteOf(content, 64 * KiB), file(content), staging, {
        md5: false,
        serverSide: false,
      }),
    ).rejects.toThrow('disk full');
    expect(overlapped()).toBe(false);
    expect(outcome()).toBe('aborted');
  });
});

/**
 * A staging area of files on this host (localFiles): what writeSmallObject is given, one entry a
 * call; whatever createObject writes (the streaming path) kept apart.
 */
function localStagingOf() {
  const whole: { path: string; bytes: Buffer }[] = [];
  const streamed = stagingOf();
  const staging = {
    localFiles: { prepare: (path: string) => path },
    createObject: streamed.staging.createObject,
    async writeSmallObject(path: string, content: Uint8Array) {
      whole.push({ path, bytes: Buffer.from(content) });
    },
  } as unknown as StagingArea;
  return { staging, whole, streamed: streamed.writes, outcome: streamed.outcome };
}

/** A file as listed: `listed` bytes, whatever the object holds. */
const listedAs = (content: Buffer, listed: number) => ({
  ...file(content),
  size: listed,
  source: { ino: 1, size: listed, mtimeMs: 0, ctimeMs: 0 },
});

describe('copyRemoteObject below LEAN_COPY_BELOW into files on this host', () => {
  it('gathers the chunks, hashes them, and writes the object once, whole', async () => {
    const content = randomBytes(300 * KiB);
    const { staging, whole, streamed } = localStagingOf();
    const bytes: number[] = [];
    const { result } = await copyRemoteObject(remoteOf(content, 64 * KiB), file(content), staging, {
      md5: true,
      serverSide: true,
      onBytes: (n) => bytes.push(n),
    });
    expect(whole).toHaveLength(1);
    expect(whole[0].path).toBe('large/reads.bam');
    expect(whole[0].bytes.equals(content)).toBe(true);
    expect(streamed).toHaveLength(0);
    expect(bytes).toEqual([content.length]);
    expect(result).toMatchObject({
      size: content.length,
      sha256: createHash('sha256').update(content).digest('hex'),
      md5: createHash('md5').update(content).digest('hex'),
      source: file(content).source,
    });
  });

  it('writes an empty object', async () => {
    const content = Buffer.alloc(0);
    const { staging, whole } = localStagingOf();
    const { result } = await copyRemoteObject(remoteOf(content, 64 * KiB), file(content), staging, {
      md5: false,
      serverSide: false,
    });
    expect(whole.map((w) => w.bytes.length)).toEqual([0]);
    expect(result.sha256).toBe(createHash('sha256').digest('hex'));
    expect(result.md5).toBeNull();
  });

  it('refuses an object of more or fewer bytes than listed as the streaming path does', async () => {
    const refusal = async (has: number, listed: number, local: boolean) => {
      const content = randomBytes(has);
      const { staging } = local ? localStagingOf() : stagingOf();
      return copyRemoteObject(remoteOf(content, 64 * KiB), listedAs(content, listed), staging, {
        md5: false,
        serverSide: false,
      }).catch((error: unknown) => error);
    };
    // Below LEAN_COPY_BELOW: the lean path into files, the streaming path into another store.
    for (const [has, listed] of [
      [200 * KiB, 100 * KiB],
      [100 * KiB, 200 * KiB],
    ]) {
      const [lean, streamed] = await Promise.all([
        refusal(has, listed, true),
        refusal(has, listed, false),
      ]);
      const shown = (error: unknown) => {
        const { name, message, code, details } = error as Record<string, unknown>;
        return { name, message, code, details };
      };
      expect(shown(lean)).toMatchObject({ name: 'ImportTransientError', code: 'source_changed' });
      expect(shown(lean)).toEqual(shown(streamed));
    }
  });

  it('stops before writing when a stop was asked for', async () => {
    const content = randomBytes(10 * KiB);
    const { staging, whole } = localStagingOf();
    await expect(
      copyRemoteObject(remoteOf(content, 64 * KiB), file(content), staging, {
        md5: false,
        serverSide: false,
        stopRequested: () => true,
      }),
    ).rejects.toBeInstanceOf(ImportStoppedError);
    expect(whole).toHaveLength(0);
  });

  it('streams an object of LEAN_COPY_BELOW bytes or more', async () => {
    expect(LEAN_COPY_BELOW).toBe(MiB);
    const content = randomBytes(LEAN_COPY_BELOW + 100 * KiB);
    const { staging, whole, streamed } = localStagingOf();
    const { result } = await copyRemoteObject(remoteOf(content, 64 * KiB), file(content), staging, {
      md5: false,
      serverSide: false,
    });
    expect(whole).toHaveLength(0);
    expect(streamed.map((w) => w.length)).toEqual([WRITE_BYTES, 100 * KiB]);
    expect(Buffer.concat(streamed).equals(content)).toBe(true);
    expect(result.sha256).toBe(createHash('sha256').update(content).digest('hex'));
  });

  it('streams a small object into a store without local files (S3)', async () => {
    const content = randomBytes(10 * KiB);
    const { staging, writes } = stagingOf();
    await copyRemoteObject(remoteOf(content, 64 * KiB), file(content), staging, {
      md5: false,
      serverSide: true,
    });
    expect(Buffer.concat(writes).equals(content)).toBe(true);
  });
});

describe('copyRemoteObject of an object of other than its listed size', () => {
  it.each([
    ['lean', 'more', 100 * KiB, 100 * KiB - 1, 'more bytes than the 102399 listed'],
    ['lean', 'fewer', 100 * KiB, 100 * KiB + 1, '102400 bytes, listed 102401'],
    ['streaming', 'more', 2 * MiB, 2 * MiB - 1, 'more bytes than the 2097151 listed'],
    ['streaming', 'fewer', 2 * MiB, 2 * MiB + 1, '2097152 bytes, listed 2097153'],
  ])(
    'refuses it on the %s path (%s bytes) as source_changed, nothing past the listed size written',
    async (path, _, has, listed, what) => {
      const content = randomBytes(has);
      const { staging, whole, streamed, outcome } = localStagingOf();
      await expect(
        copyRemoteObject(remoteOf(content, 64 * KiB), listedAs(content, listed), staging, {
          md5: false,
          serverSide: false,
        }),
      ).rejects.toMatchObject({
        name: 'ImportTransientError',
        code: 'source_changed',
        details: [{ code: 'source_changed', path: 'large/reads.bam', message: what }],
      });
      expect(whole).toHaveLength(0);
      expect(Buffer.concat(streamed).length).toBeLessThanOrEqual(listed);
      // The streaming path's object was created, and is aborted, never committed.
      expect(outcome()).toBe(path === 'lean' ? 'open' : 'aborted');
    },
  );
});
