import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { digest, tempDir } from '../../../test/support/dropzone-fixture';
import { cachedBytes } from '../../../test/support/page-cache';
import {
  bodySize,
  decrypt,
  generateKeyPair,
  HeaderWriter,
  headerPackets,
  openHeader,
  secretKey,
} from '@app/crypt4gh';
import { allocAligned } from '../../storage/local-objects';
import { CopyBatch, CopyBuffers, runCopyBatch } from './copy-batch';
import { DIRECT_WRITE_BUFFERS } from './hashing-copy';

const MiB = 1024 * 1024;

/** The flags of every openSync call, and a way to undo the spy. */
function spyOnOpens(refuseDirect = false): { flags: number[]; restore(): void } {
  const nodeFs = jest.requireActual<typeof fs>('node:fs');
  const real = nodeFs.openSync;
  const flags: number[] = [];
  const spy = jest.spyOn(nodeFs, 'openSync').mockImplementation((path, how, mode) => {
    flags.push(typeof how === 'number' ? how : -1);
    if (refuseDirect && typeof how === 'number' && (how & fs.constants.O_DIRECT) !== 0) {
      // What Linux does on a filesystem without O_DIRECT: creates the file, then refuses.
      real(path, how & ~fs.constants.O_DIRECT, mode as number);
      throw Object.assign(new Error('EINVAL: invalid argument, open'), { code: 'EINVAL' });
    }
    return real(path, how, mode);
  });
  return { flags, restore: () => spy.mockRestore() };
}

describe('runCopyBatch (as a copy thread runs it, on real files)', () => {
  let dir: string;
  let spares: number;
  beforeEach(() => {
    dir = tempDir('copy-batch');
    mkdirSync(join(dir, 'src'));
    mkdirSync(join(dir, 'staging'));
    spares = 0;
  });

  const buffers = (): CopyBuffers => {
    const buffer = allocAligned(MiB);
    return {
      buffer,
      spares: () => (
        spares++,
        Array.from({ length: DIRECT_WRITE_BUFFERS - 1 }, () => allocAligned(buffer.length))
      ),
    };
  };

  function batch(files: Record<string, { content: Buffer; direct?: boolean }>): CopyBatch {
    return {
      id: 1,
      stagingId: 'area',
      sourceRoot: join(dir, 'src'),
      md5: true,
      bufferBytes: MiB,
      jobs: Object.entries(files).map(([path, { content, direct }]) => {
        writeFileSync(join(dir, 'src', path), content);
        return { path, target: join(dir, 'staging', path), ...(direct ? { direct } : {}) };
      }),
      stop: new Int32Array(new SharedArrayBuffer(4)),
    };
  }

  it('copies a file written direct on two buffers and a small one on one, each hashed', async () => {
    const large = randomBytes(3 * MiB + 12_345);
    const small = randomBytes(5000);
    const opens = spyOnOpens();
    let outcomes;
    try {
      outcomes = await runCopyBatch(
        batch({ 'large.bin': { content: large, direct: true }, 'small.bin': { content: small } }),
        buffers(),
      );
    } finally {
      opens.restore();
    }
    expect(outcomes).toMatchObject([
      { size: large.length, sha256: digest('sha256', large), md5: digest('md5', large) },
      { size: small.length, sha256: digest('sha256', small), md5: digest('md5', small) },
    ]);
    expect(spares).toBe(1);
    // The large object was created direct and bypassed the page cache.
    expect(opens.flags.filter((f) => f !== -1 && f & fs.constants.O_DIRECT)).toHaveLength(1);
    expect(cachedBytes(join(dir, 'staging/large.bin'))).toBe(0);
    expect(readFileSync(join(dir, 'staging/large.bin')).equals(large)).toBe(true);
    expect(readFileSync(join(dir, 'staging/small.bin')).equals(small)).toBe(true);
  });

  it('stops a direct file at the stop flag, answering ImportStoppedError and starting nothing after it', async () => {
    const copy = batch({
      'large.bin': { content: randomBytes(6 * MiB), direct: true },
      'after.bin': { content: randomBytes(10) },
    });
    let reported = 0;
    const outcomes = await runCopyBatch(copy, buffers(), (bytes) => {
      reported += bytes;
      // What the main thread does when the worker is stopping: set the shared flag.
      if (reported >= 2 * MiB) Atomics.store(copy.stop!, 0, 1);
    });
    expect(outcomes).toEqual([{ error: expect.objectContaining({ name: 'ImportStoppedError' }) }]);
    expect(reported).toBe(2 * MiB);
    expect(fs.statSync(join(dir, 'staging/large.bin')).size).toBeLessThan(6 * MiB);
    expect(existsSync(join(dir, 'staging/after.bin'))).toBe(false);
  });

  it('where the filesystem refuses O_DIRECT, copies a direct job through the page cache, on one buffer', async () => {
    // Fresh modules: the refusal is remembered per thread (module state), as it is one root.
    let isolated!: typeof import('./copy-batch');
    jest.isolateModules(() => {
      isolated = jest.requireActual<typeof import('./copy-batch')>('./copy-batch');
    });
    const large = randomBytes(2 * MiB + 1);
    const opens = spyOnOpens(true);
    let outcomes;
    try {
      outcomes = await isolated.runCopyBatch(
        batch({ 'large.bin': { content: large, direct: true } }),
        buffers(),
      );
    } finally {
      opens.restore();
    }
    expect(outcomes).toMatchObject([{ size: large.length, sha256: digest('sha256', large) }]);
    // One refused direct open (its file removed), then the buffered one, on the blocking path.
    expect(opens.flags.filter((f) => f !== -1 && f & fs.constants.O_DIRECT)).toHaveLength(1);
    expect(spares).toBe(0);
    expect(readFileSync(join(dir, 'staging/large.bin')).equals(large)).toBe(true);
    expect(fs.statSync(join(dir, 'staging/large.bin')).mode & 0o777).toBe(0o444);
  });

  describe('in archive mode (headerKeys: every file stored encrypted)', () => {
    const reader = generateKeyPair();
    const headers = new HeaderWriter([reader.publicKey]);

    /** `batch`, each job with its header and body checksum beside its body, keys as posted. */
    function archiveBatch(files: Record<string, Buffer>, direct = false): CopyBatch {
      mkdirSync(join(dir, 'headers'));
      mkdirSync(join(dir, 'sums'));
      const copy = batch(
        Object.fromEntries(
          Object.entries(files).map(([path, content]) => [path, { content, direct }]),
        ),
      );
      return {
        ...copy,
        headerKeys: structuredClone(headers.keys),
        jobs: copy.jobs.map((job) => ({
          ...job,
          companions: {
            header: join(dir, 'headers', job.path),
            bodySha256: join(dir, 'sums', job.path),
          },
        })),
      };
    }

    async function plaintextOf(path: string): Promise<Buffer> {
      const parts: Buffer[] = [];
      const body = readFileSync(join(dir, 'staging', path));
      const header = readFileSync(join(dir, 'headers', path));
      for await (const part of decrypt([body], [reader.secretKey], { header })) parts.push(part);
      return Buffer.concat(parts);
    }

    it("writes each file as its header, a body of sealed segments and the body's SHA-256, the outcome the plain-text's", async () => {
      const files = {
        'small.bin': randomBytes(5000),
        'segments.bin': randomBytes(3 * 65_536 + 7),
        'chunks.bin': randomBytes(2 * MiB + 3),
        'empty.bin': Buffer.alloc(0),
      };
      const outcomes = await runCopyBatch(archiveBatch(files), buffers());
      expect(outcomes).toMatchObject(
        Object.values(files).map((plain) => ({
          size: plain.length,
          sha256: digest('sha256', plain),
          md5: digest('md5', plain),
        })),
      );
      const dataKeys = new Set<string>();
      for (const [path, plain] of Object.entries(files)) {
        const body = readFileSync(join(dir, 'staging', path));
        expect(body.length).toBe(bodySize(plain.length));
        if (plain.length >= 32) expect(body.includes(plain.subarray(0, 32))).toBe(false);
        expect(readFileSync(join(dir, 'sums', path), 'utf8')).toBe(`${digest('sha256', body)}\n`);
        expect((await plaintextOf(path)).equals(plain)).toBe(true);
        const packets = await headerPackets(readFileSync(join(dir, 'headers', path)));
        dataKeys.add(
          openHeader(packets, [secretKey(reader.secretKey)]).dataKeys[0].toString('hex'),
        );
      }
      // A data key of each file's own.
      expect(dataKeys.size).toBe(Object.keys(files).length);
    });

    it('seals a direct body while its reads and writes run in the background: past the page cache, every byte in place', async () => {
      // More than two 2 MiB gathering buffers of sealed bytes, so each is filled again after its
      // write went out in the background, and a last partial block padded and cut.
      const plain = randomBytes(9 * MiB + 12_345);
      const opens = spyOnOpens();
      let outcomes;
      try {
        outcomes = await runCopyBatch(archiveBatch({ 'large.bin': plain }, true), buffers());
      } finally {
        opens.restore();
      }
      expect(outcomes).toMatchObject([
        { size: plain.length, sha256: digest('sha256', plain), md5: digest('md5', plain) },
      ]);
      // The overlapped copy took its spare buffers: reads and writes in the background.
      expect(spares).toBe(1);
      expect(opens.flags.filter((f) => f !== -1 && f & fs.constants.O_DIRECT)).toHaveLength(1);
      expect(cachedBytes(join(dir, 'staging/large.bin'))).toBe(0);
      const body = readFileSync(join(dir, 'staging/large.bin'));
      expect(body.length).toBe(bodySize(plain.length));
      expect(body.includes(plain.subarray(0, 32))).toBe(false);
      expect(readFileSync(join(dir, 'sums/large.bin'), 'utf8')).toBe(`${digest('sha256', body)}\n`);
      expect((await plaintextOf('large.bin')).equals(plain)).toBe(true);
    });

    it('fails a direct body whose background write fails (ENOSPC) with that error, once no write is in flight', async () => {
      const nodeFs = jest.requireActual<typeof fs>('node:fs');
      const real = nodeFs.write;
      let writes = 0;
      // Writes in flight per descriptor: only closing the descriptor being written counts (the
      // source's, or a header's, may close meanwhile).
      const inFlight = new Map<number, number>();
      let closedInFlight = false;
      const realClose = nodeFs.closeSync;
      const closeSpy = jest.spyOn(nodeFs, 'closeSync').mockImplementation((fd) => {
        if ((inFlight.get(fd) ?? 0) > 0) closedInFlight = true;
        realClose(fd);
      });
      const writeSpy = jest.spyOn(nodeFs, 'write').mockImplementation(((...args: unknown[]) => {
        const callback = args[args.length - 1] as (error: Error | null, n?: number) => void;
        const fd = args[0] as number;
        inFlight.set(fd, (inFlight.get(fd) ?? 0) + 1);
        const done = (error: Error | null, n?: number) => {
          inFlight.set(fd, inFlight.get(fd)! - 1);
          callback(error, n);
        };
        // The second gathering buffer's write: the disk is full. The third, started by the next
        // chunk before it waits for the second, is still going out when that failure is known.
        writes += 1;
        if (writes === 2) {
          setTimeout(
            () => done(Object.assign(new Error('ENOSPC: no space left'), { code: 'ENOSPC' })),
            20,
          );
          return;
        }
        const write = () => (real as (...a: unknown[]) => void)(...args.slice(0, -1), done);
        if (writes === 3) setTimeout(write, 100);
        else write();
      }) as typeof fs.write);
      let outcomes;
      try {
        outcomes = await runCopyBatch(
          archiveBatch({ 'large.bin': randomBytes(12 * MiB) }, true),
          buffers(),
        );
      } finally {
        writeSpy.mockRestore();
        closeSpy.mockRestore();
      }
      expect(outcomes).toEqual([{ error: expect.objectContaining({ code: 'ENOSPC' }) }]);
      expect(writes).toBeGreaterThanOrEqual(2);
      expect(closedInFlight).toBe(false);
      expect(existsSync(join(dir, 'sums/large.bin'))).toBe(false);
    });

    /** Stops the copy of one large.bin once its first bytes are in: only cipher-text is left, and no body checksum. */
    async function stopMidFile(plain: Buffer, direct: boolean) {
      const copy = archiveBatch({ 'large.bin': plain }, direct);
      const outcomes = await runCopyBatch(copy, buffers(), (bytes) => {
        if (bytes > 0) Atomics.store(copy.stop!, 0, 1);
      });
      expect(outcomes).toEqual([
        { error: expect.objectContaining({ name: 'ImportStoppedError' }) },
      ]);
      const body = readFileSync(join(dir, 'staging/large.bin'));
      expect(body.length).toBeLessThan(bodySize(plain.length));
      expect(body.includes(plain.subarray(0, 32))).toBe(false);
      expect(existsSync(join(dir, 'sums/large.bin'))).toBe(false);
      return copy;
    }

    it('stops a direct body mid-file with every write ended, leaving only cipher-text and no body checksum', async () => {
      await stopMidFile(randomBytes(12 * MiB), true);
    });

    it('stops mid-file leaving only cipher-text, and refuses a job that names no header before creating anything', async () => {
      const plain = randomBytes(3 * MiB);
      const copy = await stopMidFile(plain, false);

      writeFileSync(join(dir, 'src/bare.bin'), plain);
      const bare = await runCopyBatch(
        {
          ...copy,
          stop: new Int32Array(new SharedArrayBuffer(4)),
          jobs: [{ path: 'bare.bin', target: join(dir, 'staging/bare.bin') }],
        },
        buffers(),
      );
      expect(bare).toEqual([
        { error: expect.objectContaining({ message: expect.stringMatching(/names no header/) }) },
      ]);
      expect(existsSync(join(dir, 'staging/bare.bin'))).toBe(false);
    });
  });
});
