import { PartBufferPool, PooledBytes } from './part-buffer-pool';

const PART = 1024;

/** Whether a promise has settled, after the microtasks already queued have run. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(() => (done = true));
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

describe('PartBufferPool: the worker-wide upload memory', () => {
  it('never holds more than count part buffers, and reuses them instead of allocating', async () => {
    const pool = new PartBufferPool(PART, 3);
    const first = await Promise.all([pool.takePart(), pool.takePart(), pool.takePart()]);
    expect(pool.allocatedBuffers).toBe(3);
    expect(first.every((lent) => lent.bytes.length === PART)).toBe(true);

    // A fourth waits until one is given back, then gets that very buffer.
    const fourth = pool.takePart();
    expect(await settled(fourth)).toBe(false);
    const given = first[1].bytes;
    first[1].release();
    expect((await fourth).bytes).toBe(given);
    expect(pool.allocatedBuffers).toBe(3);

    // A thousand more parts through the pool, a few at a time: still three buffers.
    const seen = new Set<ArrayBufferLike>(first.map((lent) => lent.bytes.buffer));
    first[0].release();
    first[2].release();
    (await fourth).release();
    for (let i = 0; i < 1000; i++) {
      const lent = await Promise.all([pool.takePart(), pool.takePart()]);
      for (const l of lent) {
        seen.add(l.bytes.buffer);
        l.release();
      }
    }
    expect(pool.allocatedBuffers).toBe(3);
    expect(seen.size).toBe(3);
    expect(pool.idleBuffers).toBe(3);
  });

  it('cuts small objects from shared slabs: many in flight within the same bytes, none overlapping', async () => {
    const pool = new PartBufferPool(PART, 2);
    expect(pool.pieceLimit).toBe(PART / 4);
    // 2 buffers of 1024 bytes hold sixteen 100-byte pieces (ten a slab, minus what does not fit).
    const pieces: PooledBytes[] = [];
    for (let i = 0; i < 20; i++) pieces.push(await pool.take(100));
    expect(pool.allocatedBuffers).toBe(2);
    pieces.forEach((piece, i) => piece.bytes.fill(i));
    pieces.forEach((piece, i) => expect(piece.bytes.every((b) => b === i)).toBe(true));

    // Both slabs are in use: the next piece and a whole part wait, served in the order asked.
    const order: string[] = [];
    const part = pool.takePart().then((lent) => (order.push('part'), lent));
    const piece = pool.take(100).then((lent) => (order.push('piece'), lent));
    expect(await settled(part)).toBe(false);
    // The first slab's pieces come back: the whole buffer is free again, the part (asked first)
    // gets it, and the piece keeps waiting for room.
    for (const p of pieces.slice(0, 10)) p.release();
    expect(await settled(part)).toBe(true);
    expect(await settled(piece)).toBe(false);
    for (const p of pieces.slice(10)) p.release();
    expect(await settled(piece)).toBe(true);
    expect(order).toEqual(['part', 'piece']);
    (await part).release();
    (await piece).release();
    expect(pool.allocatedBuffers).toBe(2);
    expect(pool.idleBuffers).toBe(2);
  });

  it('gives objects above the piece limit a whole part, and refuses sizes it cannot lend', async () => {
    const pool = new PartBufferPool(PART, 1);
    const lent = await pool.take(PART / 2);
    expect(lent.bytes.length).toBe(PART);
    expect(() => lent.release()).not.toThrow();
    expect(() => lent.release()).toThrow('twice');
    expect(() => pool.take(PART + 1)).toThrow();
    expect(() => pool.take(0)).toThrow();
    expect(() => new PartBufferPool(PART, 0)).toThrow();
  });

  it('an idle slab is lent as a part, so small objects never keep the buffers from large ones', async () => {
    const pool = new PartBufferPool(PART, 1);
    const small = await pool.take(10);
    const part = pool.takePart();
    expect(await settled(part)).toBe(false);
    small.release();
    const whole = await part;
    expect(whole.bytes.length).toBe(PART);
    expect(pool.allocatedBuffers).toBe(1);
    whole.release();
    expect(pool.idleBuffers).toBe(1);
  });
  it('cycles a stream of small objects through one slab while a few of them are out', async () => {
    const pool = new PartBufferPool(PART, 3);
    // Three pieces in flight at any time (less than a slab's segment of four), 2,000 of 100
    // bytes (about 200 slabs' worth): the ring reuses the slab's start once its first segment has
    // no piece out.
    const out: PooledBytes[] = [];
    const slabs = new Set<ArrayBufferLike>();
    for (let i = 0; i < 2000; i++) {
      const piece = await pool.take(100);
      piece.bytes.fill(i % 251);
      slabs.add(piece.bytes.buffer);
      out.push(piece);
      if (out.length === 3) {
        const done = out.shift()!;
        expect(done.bytes.every((b) => b === (i - 2) % 251)).toBe(true);
        done.release();
      }
    }
    expect(pool.allocatedBuffers).toBe(1);
    expect(slabs.size).toBe(1);
    // Pieces still out are never overlapped: each keeps its bytes.
    out.forEach((piece, k) => expect(piece.bytes.every((b) => b === (1998 + k) % 251)).toBe(true));
    // A segment with a piece of the last lap out is not entered: with one piece kept in each
    // segment, the next piece waits for another buffer rather than overlap it.
    for (const piece of out) piece.release();
    expect(pool.idleBuffers).toBe(1);
    const kept: PooledBytes[] = [];
    for (let i = 0; i < 10; i++) {
      const piece = await pool.take(100);
      if (i % 3 === 0) kept.push(piece);
      else piece.release();
    }
    const more = await pool.take(100);
    expect(pool.allocatedBuffers).toBe(2);
    for (const piece of kept)
      expect(
        more.bytes.buffer === piece.bytes.buffer &&
          more.bytes.byteOffset === piece.bytes.byteOffset,
      ).toBe(false);
    more.release();
    for (const piece of kept) piece.release();
    expect(pool.idleBuffers).toBe(2);
  });
});
