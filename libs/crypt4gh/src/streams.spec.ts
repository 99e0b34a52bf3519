import { randomBytes } from 'node:crypto';
import {
  bodySize,
  buildHeader,
  CIPHER_SEGMENT_SIZE,
  Crypt4ghError,
  decrypt,
  encrypt,
  encryptBody,
  encryptStream,
  generateKeyPair,
  MAX_PACKET_LENGTH,
  headerPackets,
  openHeader,
  openStream,
  plaintextRange,
  plaintextSize,
  rewrap,
  rewrapHeader,
  secretKey,
  SegmentEncryptor,
  SEGMENT_SIZE,
} from '@app/crypt4gh';

/** `bytes` in chunks of `size`: the reader must not depend on chunks lining up with segments. */
function* chunked(bytes: Buffer, size = 7_777): Generator<Buffer> {
  for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size);
}

async function collect(stream: AsyncIterable<Buffer>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of stream) parts.push(part);
  return Buffer.concat(parts);
}

async function* asAsync(bytes: Buffer, size?: number): AsyncGenerator<Buffer> {
  yield* chunked(bytes, size);
}

/** Resolves to the error `stream` ends with, and how many plain-text bytes it gave before. */
async function failure(
  stream: AsyncIterable<Buffer>,
): Promise<{ error: Crypt4ghError; given: number }> {
  let given = 0;
  try {
    for await (const part of stream) given += part.length;
  } catch (error) {
    if (error instanceof Crypt4ghError) return { error, given };
    throw error;
  }
  throw new Error('the stream was accepted');
}

const alice = generateKeyPair();
const bob = generateKeyPair();
const carol = generateKeyPair();

describe('Crypt4GH streams', () => {
  it.each([
    [0, 1000],
    // A small file in one chunk, and one held across chunks shorter than a segment.
    [4096, 4096],
    [5_000, 3_000],
    [SEGMENT_SIZE, SEGMENT_SIZE],
    [3 * SEGMENT_SIZE + 5, 7_777],
    [3 * SEGMENT_SIZE + 5, 2 * SEGMENT_SIZE + 3],
  ])(
    'SegmentEncryptor: %i bytes pushed in chunks of %i make a body that decrypts to them',
    async (size, chunk) => {
      const plain = randomBytes(size);
      const dataKey = randomBytes(32);
      const encryptor = new SegmentEncryptor(dataKey);
      const parts: Buffer[] = [];
      for (const piece of chunked(plain, chunk)) parts.push(...encryptor.push(piece));
      parts.push(...encryptor.end());
      const body = Buffer.concat(parts);
      expect(body.length).toBe(bodySize(size));
      const header = buildHeader({ dataKeys: [dataKey] }, [alice.publicKey]);
      expect(await collect(decrypt([body], [alice.secretKey], { header }))).toEqual(plain);
    },
  );

  it('SegmentEncryptor.release frees the cipher-texts handed out since the last chunk, and nothing else', async () => {
    const plain = randomBytes(5 * SEGMENT_SIZE + 11);
    const dataKey = randomBytes(32);
    const encryptor = new SegmentEncryptor(dataKey);
    const copied: Buffer[] = [];
    const released: Buffer[][] = [];
    const pieces = [...chunked(plain, 2 * SEGMENT_SIZE + 3)];
    for (const piece of pieces) {
      const parts = encryptor.push(piece);
      copied.push(...parts.map((part) => Buffer.from(part)));
      encryptor.release();
      released.push(parts);
    }
    const last = encryptor.end();
    copied.push(...last.map((part) => Buffer.from(part)));
    // Handed out before the last chunk and not released since: a new chunk forgets them.
    const kept = encryptor.push(Buffer.alloc(0));
    expect(kept).toEqual([]);
    encryptor.release();
    expect(last.map((part) => part.length)).toEqual([12, 11, 16]);
    const header = buildHeader({ dataKeys: [dataKey] }, [alice.publicKey]);
    expect(await collect(decrypt([Buffer.concat(copied)], [alice.secretKey], { header }))).toEqual(
      plain,
    );
    const parts = released.flat();
    expect(parts).toHaveLength(3 * 5);
    parts.forEach((part, i) => expect(part.length).toBe(i % 3 === 1 ? 0 : i % 3 === 0 ? 12 : 16));
    // The plain-text it was given is untouched (segments are sealed from views of the chunks).
    expect(Buffer.concat(pieces)).toEqual(plain);
  });

  it.each([0, 1, SEGMENT_SIZE - 1, SEGMENT_SIZE, SEGMENT_SIZE + 1, 3 * SEGMENT_SIZE + 5])(
    'encrypts and decrypts %i bytes, whatever size the chunks come in',
    async (size) => {
      const plain = randomBytes(size);
      const file = await collect(encrypt(asAsync(plain), [alice.publicKey]));
      const header = (await openStream([file], [alice.secretKey])).headerLength;
      expect(file.length - header).toBe(bodySize(size));
      expect(plaintextSize(file.length - header)).toBe(size);
      expect((await collect(decrypt(asAsync(file, 1_000), [alice.secretKey]))).equals(plain)).toBe(
        true,
      );
    },
  );

  it('gives every segment a nonce of its own, across the blocks nonces are drawn in, that never changes once handed out', async () => {
    const nonces: Buffer[] = [];
    const copies: Buffer[] = [];
    let part = 0;
    for await (const piece of encryptBody([Buffer.alloc(600 * SEGMENT_SIZE)], randomBytes(32))) {
      if (part++ % 3 === 0) {
        nonces.push(piece);
        copies.push(Buffer.from(piece));
      }
    }
    expect(nonces).toHaveLength(600);
    expect(new Set(nonces.map((nonce) => nonce.toString('hex'))).size).toBe(600);
    nonces.forEach((nonce, i) => expect(nonce.equals(copies[i])).toBe(true));
  });

  it('gives every recipient the file, and refuses anyone else', async () => {
    const plain = randomBytes(100_000);
    const file = await collect(encrypt(asAsync(plain), [alice.publicKey, bob.publicKey]));
    expect((await collect(decrypt([file], [alice.secretKey]))).equals(plain)).toBe(true);
    expect((await collect(decrypt([file], [bob.secretKey]))).equals(plain)).toBe(true);
    const refused = await failure(decrypt([file], [carol.secretKey]));
    expect(refused.error.fault).toBe('no-key');
    expect(refused.given).toBe(0);
  });

  it('decrypts a body whose header is stored apart, and tries each data key of the header', async () => {
    const plain = randomBytes(2 * SEGMENT_SIZE + 10);
    const first = randomBytes(32);
    const second = randomBytes(32);
    const header = buildHeader({ dataKeys: [first, second] }, [alice.publicKey]);
    const body = await collect(encryptBody(asAsync(plain), second));
    expect((await collect(decrypt([body], [alice.secretKey], { header }))).equals(plain)).toBe(
      true,
    );
  });

  it('re-wraps the header for a new reader without touching a byte of the body', async () => {
    const plain = randomBytes(SEGMENT_SIZE + 99);
    const { header, body } = encryptStream(asAsync(plain), [alice.publicKey]);
    const storedBody = await collect(body);
    const rewrapped = await rewrapHeader(header, [secretKey(alice.secretKey)], [bob.publicKey]);
    expect(
      (await collect(decrypt([storedBody], [bob.secretKey], { header: rewrapped }))).equals(plain),
    ).toBe(true);
    expect(
      (await failure(decrypt([storedBody], [alice.secretKey], { header: rewrapped }))).error.fault,
    ).toBe('no-key');

    const whole = Buffer.concat([header, storedBody]);
    const stream = await collect(rewrap(asAsync(whole), [alice.secretKey], [carol.publicKey]));
    const streamHeader = (await openStream([stream], [carol.secretKey])).headerLength;
    expect(stream.subarray(streamHeader).equals(storedBody)).toBe(true);
  });

  it('keeps the packets of readers it cannot open when asked, so they still read the file', async () => {
    const plain = randomBytes(1000);
    const { header, body } = encryptStream(asAsync(plain), [alice.publicKey, carol.publicKey]);
    const storedBody = await collect(body);
    const kept = await rewrapHeader(header, [secretKey(alice.secretKey)], [bob.publicKey], {
      keepForeign: true,
    });
    expect(
      (await collect(decrypt([storedBody], [carol.secretKey], { header: kept }))).equals(plain),
    ).toBe(true);
    expect(
      (await collect(decrypt([storedBody], [bob.secretKey], { header: kept }))).equals(plain),
    ).toBe(true);
  });

  it('plans the header and segments that give exactly plain-text bytes a..b', async () => {
    const size = 5 * SEGMENT_SIZE + 1234;
    const plain = randomBytes(size);
    const { header, body } = encryptStream(asAsync(plain), [alice.publicKey]);
    const storedBody = await collect(body);
    const opened = openHeader(await headerPackets(header), [secretKey(alice.secretKey)]);
    const ranges = [
      [0, 0],
      [0, size - 1],
      [SEGMENT_SIZE - 1, SEGMENT_SIZE],
      [SEGMENT_SIZE, 2 * SEGMENT_SIZE - 1],
      [size - 1, size - 1],
      [100, 200],
      [3 * SEGMENT_SIZE + 17, size - 2],
    ];
    for (const [start, end] of ranges) {
      const range = plaintextRange(opened, size, start, end, [bob.publicKey]);
      const sent = storedBody.subarray(range.bodyStart, range.bodyEnd);
      expect(sent.length).toBeLessThanOrEqual(end - start + 1 + 2 * CIPHER_SEGMENT_SIZE);
      expect(range.lastSegment - range.firstSegment + 1).toBe(
        Math.ceil(sent.length / CIPHER_SEGMENT_SIZE),
      );
      const got = await collect(decrypt([sent], [bob.secretKey], { header: range.header }));
      expect(got.equals(plain.subarray(start, end + 1))).toBe(true);
    }
    expect(() => plaintextRange(opened, size, 10, size, [bob.publicKey])).toThrow(Crypt4ghError);
    expect(() => plaintextRange(opened, size, 10, 9, [bob.publicKey])).toThrow(Crypt4ghError);
  });
});

describe('hostile Crypt4GH input', () => {
  const plain = randomBytes(4 * SEGMENT_SIZE + 500);
  let file: Buffer;
  let headerLength: number;

  beforeAll(async () => {
    file = await collect(encrypt(asAsync(plain), [alice.publicKey]));
    headerLength = (await openStream([file], [alice.secretKey])).headerLength;
  });

  async function refusal(bytes: Buffer) {
    return failure(decrypt(asAsync(bytes), [alice.secretKey]));
  }

  function altered(at: number, write: (bytes: Buffer) => void): Buffer {
    const copy = Buffer.from(file);
    write(copy.subarray(at));
    return copy;
  }

  it('refuses a stream that does not start with the magic', async () => {
    const { error, given } = await refusal(altered(0, (b) => b.write('crypt4gx')));
    expect([error.fault, given]).toEqual(['bad-magic', 0]);
    expect(error.message).toMatch(/Not a Crypt4GH stream/);
    expect((await refusal(Buffer.from('crypt4'))).error.fault).toBe('truncated');
  });

  it('refuses another version', async () => {
    const { error } = await refusal(altered(8, (b) => b.writeUInt32LE(2)));
    expect(error.fault).toBe('bad-version');
    expect(error.message).toMatch(/version 2/);
  });

  it.each([0, 1025, 0xffffffff])('refuses a packet count of %i', async (count) => {
    const { error } = await refusal(altered(12, (b) => b.writeUInt32LE(count)));
    expect(error.fault).toBe('bad-packet-count');
  });

  it('refuses packets past the end of the header', async () => {
    // One more packet than there is: the body's first bytes are read as its length.
    const header = file.subarray(0, headerLength);
    const more = Buffer.from(header);
    more.writeUInt32LE(2, 12);
    expect(
      (await failure(decrypt([Buffer.alloc(0)], [alice.secretKey], { header: more }))).error.fault,
    ).toBe('truncated');
    // A packet length past the end of a header stored on its own.
    const longer = Buffer.from(header);
    longer.writeUInt32LE(longer.readUInt32LE(16) + 100, 16);
    const { error } = await failure(
      decrypt([Buffer.alloc(0)], [alice.secretKey], { header: longer }),
    );
    expect(error.fault).toBe('truncated');
    expect(error.message).toMatch(/ends inside header packet 1/);
    // Lengths no packet can have.
    for (const length of [0, 3, 20, 0x7fffffff]) {
      expect((await refusal(altered(16, (b) => b.writeUInt32LE(length)))).error.fault).toBe(
        'bad-packet',
      );
    }
  });

  it('refuses a header whose packets together pass 4 MiB, before holding them', async () => {
    const header = Buffer.alloc(16 + 5 * MAX_PACKET_LENGTH);
    header.write('crypt4gh');
    header.writeUInt32LE(1, 8);
    header.writeUInt32LE(5, 12);
    for (let i = 0; i < 5; i++) header.writeUInt32LE(MAX_PACKET_LENGTH, 16 + i * MAX_PACKET_LENGTH);
    const { error } = await failure(decrypt([header], [alice.secretKey]));
    expect(error.fault).toBe('bad-packet');
    expect(error.message).toMatch(/by packet 5 of 5/);
  });

  it('refuses bytes after a header stored on its own', async () => {
    const header = Buffer.concat([file.subarray(0, headerLength), Buffer.from([0])]);
    expect(
      (await failure(decrypt([Buffer.alloc(0)], [alice.secretKey], { header }))).error.fault,
    ).toBe('trailing-bytes');
  });

  it('refuses two edit lists', async () => {
    const key = randomBytes(32);
    const second = await headerPackets(
      buildHeader({ dataKeys: [key], editList: [0, 10] }, [alice.publicKey]),
    );
    const header = buildHeader(
      { dataKeys: [key], editList: [5, 10] },
      [alice.publicKey],
      [second[1]],
    );
    const body = await collect(encryptBody([randomBytes(100)], key));
    const { error, given } = await failure(decrypt([body], [alice.secretKey], { header }));
    expect([error.fault, given]).toEqual(['two-edit-lists', 0]);
  });

  it('refuses an edit list past the end of the plain-text', async () => {
    const key = randomBytes(32);
    const body = await collect(encryptBody([randomBytes(100)], key));
    for (const editList of [[10, 91], [101], [0, 50, 51]]) {
      const header = buildHeader({ dataKeys: [key], editList }, [alice.publicKey]);
      expect((await failure(decrypt([body], [alice.secretKey], { header }))).error.fault).toBe(
        'edit-list-past-end',
      );
    }
    const exact = buildHeader({ dataKeys: [key], editList: [10, 90] }, [alice.publicKey]);
    expect((await collect(decrypt([body], [alice.secretKey], { header: exact }))).length).toBe(90);
  });

  it.each([0, 2, 4])(
    'refuses segment %i when its MAC fails, having given no byte of it',
    async (segment) => {
      const at = headerLength + segment * CIPHER_SEGMENT_SIZE + 12 + 40;
      const { error, given } = await refusal(altered(at, (b) => (b[0] ^= 1)));
      expect(error.fault).toBe('segment-mac');
      expect(error.message).toMatch(new RegExp(`Segment ${segment} `));
      expect(given).toBe(segment * SEGMENT_SIZE);
    },
  );

  it('refuses a failing segment that comes in one chunk with others, having given those before it', async () => {
    const at = headerLength + 2 * CIPHER_SEGMENT_SIZE + 12 + 40;
    const { error, given } = await failure(
      decrypt([altered(at, (b) => (b[0] ^= 1))], [alice.secretKey]),
    );
    expect(error.fault).toBe('segment-mac');
    expect(error.message).toMatch(/Segment 2 /);
    expect(given).toBe(2 * SEGMENT_SIZE);
  });

  it('refuses a body cut inside its last segment', async () => {
    const cut = file.subarray(0, headerLength + 4 * CIPHER_SEGMENT_SIZE + 20);
    expect((await refusal(cut)).error.fault).toBe('truncated');
    const shorter = file.subarray(0, file.length - 1);
    expect((await refusal(shorter)).error.fault).toBe('segment-mac');
  });
});
