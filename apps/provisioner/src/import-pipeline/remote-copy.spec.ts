import { createHash, randomBytes } from 'node:crypto';
import type { RemoteDataset } from '../sources/source-system';
import type { ObjectWriter, StagingArea } from '../storage/storage-system';
import { copyRemoteObject, WRITE_BYTES } from './remote-copy';

const KiB = 1024;

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
