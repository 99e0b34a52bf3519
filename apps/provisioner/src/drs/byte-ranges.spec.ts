import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { createServer, request, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Response } from 'express';
import type { FileHandle } from 'node:fs/promises';
import {
  copyWhileAllowed,
  FIRST_READ_BYTES,
  rangeOf,
  READ_CHUNK_BYTES,
  SPARE_BUFFER_PAIRS,
  spareBufferPairs,
  type SendingCheck,
} from './byte-ranges';

/** RFC 9110 §14.1.2 and §14.2: one `bytes=` range resolved against a size, at every edge. */
describe('rangeOf', () => {
  const SIZE = 100;

  it.each([
    ['no header', undefined, 'whole'],
    ['the first byte', 'bytes=0-0', { start: 0, end: 0 }],
    ['the last byte by position', 'bytes=99-99', { start: 99, end: 99 }],
    ['the last byte as a suffix', 'bytes=-1', { start: 99, end: 99 }],
    ['an open end', 'bytes=10-', { start: 10, end: 99 }],
    ['an end past the size, clamped', 'bytes=90-1000', { start: 90, end: 99 }],
    ['an end at the size, clamped', 'bytes=0-100', { start: 0, end: 99 }],
    ['a suffix longer than the object: all of it', 'bytes=-1000', { start: 0, end: 99 }],
    ['a suffix of exactly the size', 'bytes=-100', { start: 0, end: 99 }],
    ['a start at the size', 'bytes=100-', 'unsatisfiable'],
    ['a start past the size', 'bytes=1000-2000', 'unsatisfiable'],
    ['a zero suffix', 'bytes=-0', 'unsatisfiable'],
    ['an end before its start: ignored, whole', 'bytes=50-10', 'whole'],
    ['several ranges: whole', 'bytes=0-1,5-6', 'whole'],
    ['another unit: whole', 'items=0-1', 'whole'],
    ['no numbers: whole', 'bytes=-', 'whole'],
    ['a negative start: whole', 'bytes=--5', 'whole'],
    ['digits past 19: whole', `bytes=${'9'.repeat(20)}-`, 'whole'],
    ['white space around it', '  bytes=5-6  ', { start: 5, end: 6 }],
  ])('%s', (_name, header, expected) => {
    expect(rangeOf(header, SIZE)).toEqual(expected);
  });

  it('an empty object has no byte to give: every range is unsatisfiable, no range is whole', () => {
    expect(rangeOf('bytes=0-0', 0)).toBe('unsatisfiable');
    expect(rangeOf('bytes=-5', 0)).toBe('unsatisfiable');
    expect(rangeOf(undefined, 0)).toBe('whole');
  });

  it('a one-byte object', () => {
    expect(rangeOf('bytes=0-', 1)).toEqual({ start: 0, end: 0 });
    expect(rangeOf('bytes=1-', 1)).toBe('unsatisfiable');
    expect(rangeOf('bytes=-1', 1)).toEqual({ start: 0, end: 0 });
  });
});

/**
 * The read loop against a real socket: a Node HTTP server answering with copyWhileAllowed and a
 * client reading it, with a file larger than two read buffers.
 */
describe('copyWhileAllowed', () => {
  const FILE_BYTES = 2 * READ_CHUNK_BYTES + 12_345;
  let dir: string;
  let file: string;
  let bytes: Buffer;
  const servers: Server[] = [];

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'copy-while-allowed-'));
    file = join(dir, 'object.bin');
    bytes = randomBytes(FILE_BYTES);
    writeFileSync(file, bytes);
  });
  afterAll(async () => {
    for (const server of servers) await new Promise((done) => server.close(done));
    rmSync(dir, { recursive: true, force: true });
  });

  /**
   * Serves `range` of `path` once per request; resolves each answer's outcome (the bytes handed
   * to the socket) through `outcomes`.
   */
  async function serve(
    range: { start: number; end: number },
    check?: SendingCheck,
    path = file,
    wrap: (handle: FileHandle) => FileHandle = (handle) => handle,
  ): Promise<{ url: string; outcomes: Promise<number>[] }> {
    const outcomes: Promise<number>[] = [];
    const server = createServer((_req, res) => {
      outcomes.push(
        (async () => {
          const handle = await open(path);
          try {
            res.writeHead(200, { 'Content-Length': range.end - range.start + 1 });
            return await copyWhileAllowed(res as unknown as Response, wrap(handle), range, check);
          } finally {
            await handle.close();
          }
        })(),
      );
    });
    servers.push(server);
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, outcomes };
  }

  /** Everything the client receives until the connection ends, however it ends. */
  function receive(url: string, stopAfter = Infinity): Promise<Buffer> {
    return new Promise((resolve) => {
      const chunks: Buffer[] = [];
      let received = 0;
      const req = request(url, (res) => {
        res.on('data', (chunk: Buffer) => {
          chunks.push(chunk);
          received += chunk.length;
          if (received >= stopAfter) req.destroy();
        });
        res.on('end', () => resolve(Buffer.concat(chunks)));
        res.on('error', () => resolve(Buffer.concat(chunks)));
        res.on('close', () => resolve(Buffer.concat(chunks)));
      });
      req.on('error', () => resolve(Buffer.concat(chunks)));
      req.end();
    });
  }

  it('sends exactly the range asked for, across both buffers and a short last read', async () => {
    const start = READ_CHUNK_BYTES - 7;
    const range = { start, end: FILE_BYTES - 2 };
    const { url, outcomes } = await serve(range);
    const body = await receive(url);
    expect(body.equals(bytes.subarray(range.start, range.end + 1))).toBe(true);
    expect(await outcomes[0]).toBe(range.end - range.start + 1);
  });

  it('sends the whole file, and a range shorter than one buffer', async () => {
    const whole = await serve({ start: 0, end: FILE_BYTES - 1 });
    expect((await receive(whole.url)).equals(bytes)).toBe(true);
    const small = await serve({ start: 100, end: 109 });
    expect((await receive(small.url)).equals(bytes.subarray(100, 110))).toBe(true);
    expect(await small.outcomes[0]).toBe(10);
  });

  it('stops reading once the client is gone, and counts what was handed over', async () => {
    const big = join(dir, 'big.bin');
    // Far more than the loopback socket's buffers hold: the server must be stopped by the close.
    writeFileSync(big, Buffer.alloc(64 * READ_CHUNK_BYTES, 7));
    const { url, outcomes } = await serve(
      { start: 0, end: 64 * READ_CHUNK_BYTES - 1 },
      undefined,
      big,
    );
    const body = await receive(url, 1);
    expect(body.length).toBeGreaterThan(0);
    const handed = await outcomes[0];
    expect(handed).toBeLessThan(64 * READ_CHUNK_BYTES);
  });

  it('cuts the answer once the check refuses', async () => {
    let allowed = true;
    const big = join(dir, 'refused.bin');
    writeFileSync(big, Buffer.alloc(64 * READ_CHUNK_BYTES, 9));
    const { url, outcomes } = await serve(
      { start: 0, end: 64 * READ_CHUNK_BYTES - 1 },
      { everyMs: 20, stillAllowed: async () => allowed },
      big,
    );
    // A client that takes the first bytes, then nothing: the server's writes stay pending.
    const socket = connect(Number(new URL(url).port), '127.0.0.1');
    socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    await new Promise((resolve) => socket.once('data', resolve));
    socket.pause();
    const closed = new Promise((resolve) => socket.once('close', resolve));
    allowed = false;
    expect(await outcomes[0]).toBeLessThan(64 * READ_CHUNK_BYTES);
    socket.resume();
    await closed;
  });

  it('reads a short first chunk, so the head goes out early, then whole buffers', async () => {
    const lengths: number[] = [];
    const counted = (handle: FileHandle) =>
      ({
        read: (buffer: Buffer, offset: number, length: number, position: number) => {
          lengths.push(length);
          return handle.read(buffer, offset, length, position);
        },
      }) as unknown as FileHandle;
    const { url, outcomes } = await serve(
      { start: 0, end: FILE_BYTES - 1 },
      undefined,
      file,
      counted,
    );
    expect((await receive(url)).equals(bytes)).toBe(true);
    await outcomes[0];
    const rest = FILE_BYTES - FIRST_READ_BYTES - READ_CHUNK_BYTES;
    expect(rest).toBeLessThan(READ_CHUNK_BYTES);
    expect(lengths).toEqual([FIRST_READ_BYTES, READ_CHUNK_BYTES, rest]);
  });

  it('reads into buffers V8 maps itself (resizable), each from its first byte: page-aligned', async () => {
    const placed: { resizable: unknown; byteOffset: number }[] = [];
    const watched = (handle: FileHandle) =>
      ({
        read: (buffer: Buffer, offset: number, length: number, position: number) => {
          placed.push({
            resizable: (buffer.buffer as { resizable?: boolean }).resizable,
            byteOffset: buffer.byteOffset + offset,
          });
          return handle.read(buffer, offset, length, position);
        },
      }) as unknown as FileHandle;
    // A short range (buffers of its own size) and a whole file (full-size, possibly kept ones).
    for (const range of [
      { start: 5, end: 4_000 },
      { start: 0, end: FILE_BYTES - 1 },
    ]) {
      const { url, outcomes } = await serve(range, undefined, file, watched);
      expect((await receive(url)).equals(bytes.subarray(range.start, range.end + 1))).toBe(true);
      await outcomes[0];
    }
    expect(placed.length).toBeGreaterThan(2);
    for (const read of placed) expect(read).toEqual({ resizable: true, byteOffset: 0 });
  });

  it("keeps a completed download's buffers for the next, which sends its own bytes in them", async () => {
    const first = await serve({ start: 0, end: FILE_BYTES - 1 });
    expect((await receive(first.url)).equals(bytes)).toBe(true);
    await first.outcomes[0];
    const kept = spareBufferPairs();
    expect(kept).toBeGreaterThanOrEqual(1);
    expect(kept).toBeLessThanOrEqual(SPARE_BUFFER_PAIRS);
    // Reused buffers hold the last download's bytes: a range elsewhere must not show any of them.
    const range = { start: 12_345, end: FILE_BYTES - 1_000 };
    const second = await serve(range);
    expect((await receive(second.url)).equals(bytes.subarray(range.start, range.end + 1))).toBe(
      true,
    );
    await second.outcomes[0];
    expect(spareBufferPairs()).toBe(kept);
  });

  it('two downloads at once never share a buffer', async () => {
    const a = { start: 0, end: FILE_BYTES - 1 };
    const b = { start: 777, end: FILE_BYTES - 3 };
    const one = await serve(a);
    const two = await serve(b);
    const [bodyA, bodyB] = await Promise.all([receive(one.url), receive(two.url)]);
    expect(bodyA.equals(bytes)).toBe(true);
    expect(bodyB.equals(bytes.subarray(b.start, b.end + 1))).toBe(true);
    await Promise.all([one.outcomes[0], two.outcomes[0]]);
    expect(spareBufferPairs()).toBeLessThanOrEqual(SPARE_BUFFER_PAIRS);
  });

  it('keeps no buffer of a download cut short (a write may still hold it)', async () => {
    const whole = await serve({ start: 0, end: FILE_BYTES - 1 });
    await receive(whole.url);
    await whole.outcomes[0];
    const before = spareBufferPairs();
    const big = join(dir, 'cut.bin');
    writeFileSync(big, Buffer.alloc(64 * READ_CHUNK_BYTES, 5));
    const { url, outcomes } = await serve(
      { start: 0, end: 64 * READ_CHUNK_BYTES - 1 },
      undefined,
      big,
    );
    await receive(url, 1);
    expect(await outcomes[0]).toBeLessThan(64 * READ_CHUNK_BYTES);
    expect(spareBufferPairs()).toBe(before - 1);
  });

  it('ends the answer short when the file is shorter than the range', async () => {
    const short = join(dir, 'short.bin');
    writeFileSync(short, bytes.subarray(0, 1000));
    const { url, outcomes } = await serve({ start: 0, end: 1999 }, undefined, short);
    const body = await receive(url);
    expect(body.length).toBe(1000);
    expect(await outcomes[0]).toBe(1000);
  });
});
