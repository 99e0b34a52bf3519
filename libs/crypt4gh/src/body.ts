/**
 * The Crypt4GH body (crypt4gh.tex, "Encrypted Data"): the plain-text in 64 KiB segments, each
 * sealed with ChaCha20-IETF-Poly1305 under the data key and a random nonce, stored as
 * nonce || cipher-text || MAC. Both directions hold one segment at a time.
 */
import { createCipheriv, createDecipheriv, createSecretKey, type KeyObject } from 'node:crypto';
import type { ByteReader, ByteSource } from './byte-reader';
import { randomSlice } from './random';
import {
  CIPHER_SEGMENT_SIZE,
  Crypt4ghError,
  MAC_LENGTH,
  NONCE_LENGTH,
  SEGMENT_SIZE,
} from './format';

/**
 * A data key as the ciphers take it, made once per body: given a Buffer, Node 24's createCipheriv
 * first tries it as a KeyObject and a CryptoKey, and each try throws and catches an error: 30-55 µs
 * a cipher here, half of a small file's sealing (docs/decisions/crypt4gh-archive-speed.md).
 */
export function cipherKey(key: Uint8Array): KeyObject {
  return createSecretKey(key);
}

/** ES2024's ArrayBuffer.prototype.transfer (Node 24 has it; the project's lib is ES2023). */
type Transferable = ArrayBuffer & { transfer(length?: number): ArrayBuffer; detached: boolean };

/**
 * Frees `sealed`'s memory now: its ArrayBuffer is detached (transferred to an empty one), which
 * lets go of the backing store at once, and `sealed` is empty afterwards. Only a buffer that is
 * the whole of its ArrayBuffer, as cipher.update makes it, is detached (never a pool's slice).
 */
function freeNow(sealed: Buffer): void {
  const { buffer } = sealed;
  const whole = buffer as Transferable;
  if (sealed.byteOffset === 0 && sealed.byteLength === whole.byteLength && !whole.detached) {
    whole.transfer(0);
  }
}

/** One segment as its three parts: nonce, cipher-text, MAC. */
function sealSegment(plain: Buffer, dataKey: KeyObject): [Buffer, Buffer, Buffer] {
  const nonce = randomSlice(NONCE_LENGTH);
  const cipher = createCipheriv('chacha20-poly1305', dataKey, nonce, { authTagLength: MAC_LENGTH });
  const sealed = cipher.update(plain);
  cipher.final();
  return [nonce, sealed, cipher.getAuthTag()];
}

/**
 * The body of `source`'s bytes: one sealed segment per 64 KiB of plain-text, handed out as its
 * nonce, cipher-text and MAC (not joined: that would copy every segment once more). Each chunk is
 * sealed where it lies (SegmentEncryptor), one segment at a time, without a promise per segment.
 */
export async function* encryptBody(source: ByteSource, dataKey: Buffer): AsyncGenerator<Buffer> {
  const encryptor = new SegmentEncryptor(dataKey);
  for await (const chunk of source) {
    encryptor.feed(chunk);
    for (let parts = encryptor.next(); parts !== undefined; parts = encryptor.next()) {
      yield parts[0];
      yield parts[1];
      yield parts[2];
    }
  }
  for (const part of encryptor.end()) yield part;
}

/**
 * encryptBody for a writer that is handed the plain-text chunk by chunk (a copy that hashes what
 * it reads): each full segment is sealed as soon as it is complete, so at most one segment of
 * plain-text is held. `push` returns what to write, in order; `end()` seals the last, shorter
 * segment. `feed` and `next` give the same one segment at a time.
 */
export class SegmentEncryptor {
  /**
   * The plain-text of the segment being filled, made when first needed and only as large as
   * that: most files of a dataset are far smaller than a segment, and a 64 KiB buffer for each
   * was most of what a small file allocated.
   */
  private pending: Buffer | null = null;
  private held = 0;
  private chunk: Uint8Array = new Uint8Array(0);
  private at = 0;

  private readonly dataKey: KeyObject;
  /** The cipher-texts handed out since the last feed() (a chunk's: forgotten, not freed, at the next). */
  private handedOut: Buffer[] = [];

  constructor(dataKey: Buffer) {
    this.dataKey = cipherKey(dataKey);
  }

  push(chunk: Uint8Array): Buffer[] {
    const out: Buffer[] = [];
    this.feed(chunk);
    for (let parts = this.next(); parts !== undefined; parts = this.next()) {
      out.push(parts[0], parts[1], parts[2]);
    }
    return out;
  }

  /**
   * For a writer that has copied or written every part handed out since the last feed() (by
   * push() or end() too) and holds none of them: their cipher-texts' memory is freed now, and
   * those buffers are empty afterwards.
   * cipher.update makes a new buffer for each segment, memory outside V8's heap that its
   * collector reclaims only once 60-90 MiB of it has built up in a copy thread; freed here, a
   * large body's sealing takes no more memory than a small one's. Measured faster in a worker
   * thread, slower on a main thread (docs/decisions/crypt4gh-archive-speed.md, "Memory").
   * Nonces and MACs are left as they are.
   */
  release(): void {
    for (const sealed of this.handedOut) freeNow(sealed);
    this.handedOut = [];
  }

  /** The next chunk of plain-text; call next() until it answers undefined before feeding more. */
  feed(chunk: Uint8Array): void {
    this.handedOut = [];
    this.chunk = chunk;
    this.at = 0;
  }

  /** The next segment complete in what was fed, sealed (nonce, cipher-text, MAC); undefined for none. */
  next(): [Buffer, Buffer, Buffer] | undefined {
    const { chunk } = this;
    const available = chunk.length - this.at;
    // A whole segment straight from the chunk when nothing is held: no copy into `pending`.
    if (this.held === 0 && available >= SEGMENT_SIZE) {
      const plain = Buffer.from(chunk.buffer, chunk.byteOffset + this.at, SEGMENT_SIZE);
      this.at += SEGMENT_SIZE;
      return this.seal(plain);
    }
    if (available === 0) return undefined;
    const taken = Math.min(SEGMENT_SIZE - this.held, available);
    this.hold(chunk.subarray(this.at, this.at + taken));
    this.at += taken;
    if (this.held < SEGMENT_SIZE) return undefined;
    this.held = 0;
    return this.seal(this.pending!);
  }

  end(): Buffer[] {
    if (this.held === 0) return [];
    const last = this.seal(this.pending!.subarray(0, this.held));
    this.held = 0;
    return last;
  }

  private seal(plain: Buffer): [Buffer, Buffer, Buffer] {
    const parts = sealSegment(plain, this.dataKey);
    this.handedOut.push(parts[1]);
    return parts;
  }

  /** Appends `piece` to the segment being filled (at most a segment in all). */
  private hold(piece: Uint8Array): void {
    const needed = this.held + piece.length;
    if (this.pending === null || this.pending.length < needed) {
      // The first piece's size; a second piece means a file of more: a whole segment from then on.
      const grown = Buffer.allocUnsafe(this.pending === null ? needed : SEGMENT_SIZE);
      if (this.held > 0) this.pending!.copy(grown, 0, 0, this.held);
      this.pending = grown;
    }
    this.pending.set(piece, this.held);
    this.held = needed;
  }
}

/** Segment `index`'s plain-text; `keys` are tried in turn, and a MAC no key verifies is refused. */
function openSegment(segment: Buffer, keys: readonly KeyObject[], index: number): Buffer {
  const nonce = segment.subarray(0, NONCE_LENGTH);
  const sealed = segment.subarray(NONCE_LENGTH, segment.length - MAC_LENGTH);
  const mac = segment.subarray(segment.length - MAC_LENGTH);
  for (const key of keys) {
    const decipher = createDecipheriv('chacha20-poly1305', key, nonce, {
      authTagLength: MAC_LENGTH,
    });
    decipher.setAuthTag(mac);
    const plain = decipher.update(sealed);
    try {
      decipher.final();
      return plain;
    } catch {
      // Not this key's segment (a file may use several data keys): try the next one.
    }
  }
  throw new Crypt4ghError(
    'segment-mac',
    `Segment ${index} (plain-text bytes from ${index * SEGMENT_SIZE}) fails its MAC: the body was altered or is not this header's`,
  );
}

/**
 * Opens a body's segments as its cipher-text is fed, chunk by chunk, whatever their sizes: a
 * segment inside a chunk is opened where it lies, one across chunks is first joined in a buffer
 * kept for the stream (a segment's worth at most). Measured (issue 57 item 6): a read of a
 * segment-sized piece per segment (a promise, a new buffer for each segment across two chunks)
 * cost decryption a quarter of Node's own rate.
 */
export class SegmentDecryptor {
  private chunk: Buffer = Buffer.alloc(0);
  private at = 0;
  /** The start of a segment whose end has not come yet, `held` bytes of it. */
  private partial: Buffer | null = null;
  private held = 0;
  private readonly dataKeys: readonly KeyObject[];

  /** `index`: the number of the first segment (for messages about a part of a body). */
  constructor(
    dataKeys: readonly Buffer[],
    private index = 0,
  ) {
    this.dataKeys = dataKeys.map(cipherKey);
  }

  /** The next chunk of cipher-text; call next() until it answers undefined before feeding more. */
  feed(chunk: Uint8Array): void {
    this.chunk = Buffer.isBuffer(chunk)
      ? chunk
      : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length);
    this.at = 0;
  }

  /** The plain-text of the next segment complete in what was fed, verified; undefined for none. */
  next(): Buffer | undefined {
    const available = this.chunk.length - this.at;
    if (this.held === 0 && available >= CIPHER_SEGMENT_SIZE) {
      const segment = this.chunk.subarray(this.at, this.at + CIPHER_SEGMENT_SIZE);
      this.at += CIPHER_SEGMENT_SIZE;
      return this.open(segment);
    }
    if (available === 0) return undefined;
    const taken = Math.min(CIPHER_SEGMENT_SIZE - this.held, available);
    this.hold(this.chunk.subarray(this.at, this.at + taken));
    this.at += taken;
    if (this.held < CIPHER_SEGMENT_SIZE) return undefined;
    this.held = 0;
    return this.open(this.partial!);
  }

  /** The last, shorter segment once the cipher-text has ended; refused when cut too short. */
  end(): Buffer | undefined {
    if (this.held === 0) return undefined;
    const length = this.held;
    this.held = 0;
    if (length <= NONCE_LENGTH + MAC_LENGTH) {
      throw new Crypt4ghError(
        'truncated',
        `The last segment (${this.index}) is ${length} bytes: too short to hold a nonce, data and a MAC`,
      );
    }
    return this.open(this.partial!.subarray(0, length));
  }

  private open(segment: Buffer): Buffer {
    return openSegment(segment, this.dataKeys, this.index++);
  }

  /** Appends `piece` to the segment being joined; sized to the first piece until a second comes. */
  private hold(piece: Buffer): void {
    const needed = this.held + piece.length;
    if (this.partial === null || this.partial.length < needed) {
      // A body shorter than a segment (most files of a dataset) needs only its own length.
      const grown = Buffer.allocUnsafe(this.partial === null ? needed : CIPHER_SEGMENT_SIZE);
      if (this.held > 0) this.partial!.copy(grown, 0, 0, this.held);
      this.partial = grown;
    }
    piece.copy(this.partial, this.held);
    this.held = needed;
  }
}

/**
 * The plain-text of the body `reader` is at, segment by segment, each verified before any of its
 * bytes is handed out. `firstSegment` numbers the first one (for messages about a part of a body).
 */
export async function* decryptBody(
  reader: ByteReader,
  dataKeys: readonly Buffer[],
  firstSegment = 0,
): AsyncGenerator<Buffer> {
  const decryptor = new SegmentDecryptor(dataKeys, firstSegment);
  for await (const chunk of reader.rest()) {
    decryptor.feed(chunk);
    for (let plain = decryptor.next(); plain !== undefined; plain = decryptor.next()) yield plain;
  }
  const last = decryptor.end();
  if (last !== undefined) yield last;
}

/**
 * The plain-text `editList` selects (crypt4gh.tex, "Edit List": skip, keep, skip, keep ...; after
 * a last skip, everything that follows is kept). An edit list that reaches past the end of the
 * plain-text is refused; every segment is still read (and verified) to the end.
 */
export async function* applyEditList(
  plain: AsyncIterable<Buffer>,
  editList: readonly number[],
): AsyncGenerator<Buffer> {
  if (editList.length === 0) {
    // An empty list edits nothing (the specification's trivial case).
    yield* plain;
    return;
  }
  let step = 0;
  let left = editList[0];
  while (left === 0 && step < editList.length) left = editList[++step] ?? 0;
  let position = 0;
  for await (let chunk of plain) {
    position += chunk.length;
    while (chunk.length > 0) {
      if (step >= editList.length) {
        // Past the last length: after a skip the rest is kept, after a keep it is dropped.
        if (editList.length % 2 === 1) yield chunk;
        break;
      }
      const used = Math.min(left, chunk.length);
      if (step % 2 === 1 && used > 0) yield chunk.subarray(0, used);
      chunk = chunk.subarray(used);
      left -= used;
      while (left === 0 && step < editList.length) left = editList[++step] ?? 0;
    }
  }
  if (step < editList.length) {
    const total = editList.reduce((sum, length) => sum + length, 0);
    throw new Crypt4ghError(
      'edit-list-past-end',
      `The edit list covers ${total} bytes; the plain-text holds ${position}`,
    );
  }
}
