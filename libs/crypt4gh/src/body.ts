/**
 * The Crypt4GH body (crypt4gh.tex, "Encrypted Data"): the plain-text in 64 KiB segments, each
 * sealed with ChaCha20-IETF-Poly1305 under the data key and a random nonce, stored as
 * nonce || cipher-text || MAC. Both directions hold one segment at a time.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { ByteReader, ByteSource } from './byte-reader';
import {
  CIPHER_SEGMENT_SIZE,
  Crypt4ghError,
  MAC_LENGTH,
  NONCE_LENGTH,
  SEGMENT_SIZE,
} from './format';

/** One segment as its three parts: nonce, cipher-text, MAC. */
function sealSegment(plain: Buffer, dataKey: Buffer): [Buffer, Buffer, Buffer] {
  const nonce = randomBytes(NONCE_LENGTH);
  const cipher = createCipheriv('chacha20-poly1305', dataKey, nonce, { authTagLength: MAC_LENGTH });
  const sealed = cipher.update(plain);
  cipher.final();
  return [nonce, sealed, cipher.getAuthTag()];
}

/**
 * The body of `source`'s bytes: one sealed segment per 64 KiB of plain-text, handed out as its
 * nonce, cipher-text and MAC (not joined: that would copy every segment once more).
 */
export async function* encryptBody(source: ByteSource, dataKey: Buffer): AsyncGenerator<Buffer> {
  const reader = new ByteReader(source);
  for (;;) {
    const plain = await reader.read(SEGMENT_SIZE);
    if (!plain) return;
    const [nonce, sealed, mac] = sealSegment(plain, dataKey);
    yield nonce;
    yield sealed;
    yield mac;
  }
}

/**
 * encryptBody for a writer that is handed the plain-text chunk by chunk (a copy that hashes what
 * it reads): each full segment is sealed as soon as it is complete, so at most one segment of
 * plain-text is held. Returns what to write, in order; `end()` seals the last, shorter segment.
 */
export class SegmentEncryptor {
  /**
   * The plain-text of the segment being filled, made when first needed and only as large as
   * that: most files of a dataset are far smaller than a segment, and a 64 KiB buffer for each
   * was most of what a small file allocated.
   */
  private pending: Buffer | null = null;
  private held = 0;

  constructor(private readonly dataKey: Buffer) {}

  push(chunk: Uint8Array): Buffer[] {
    const out: Buffer[] = [];
    let at = 0;
    // Whole segments straight from the chunk when nothing is held: no copy into `pending`.
    while (this.held === 0 && chunk.length - at >= SEGMENT_SIZE) {
      const plain = Buffer.from(chunk.buffer, chunk.byteOffset + at, SEGMENT_SIZE);
      for (const part of sealSegment(plain, this.dataKey)) out.push(part);
      at += SEGMENT_SIZE;
    }
    while (at < chunk.length) {
      const taken = Math.min(SEGMENT_SIZE - this.held, chunk.length - at);
      this.hold(chunk.subarray(at, at + taken));
      at += taken;
      if (this.held === SEGMENT_SIZE) {
        for (const part of sealSegment(this.pending!, this.dataKey)) out.push(part);
        this.held = 0;
      }
    }
    return out;
  }

  end(): Buffer[] {
    if (this.held === 0) return [];
    const last = sealSegment(this.pending!.subarray(0, this.held), this.dataKey);
    this.held = 0;
    return last;
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
function openSegment(segment: Buffer, keys: readonly Buffer[], index: number): Buffer {
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
 * The plain-text of the body `reader` is at, segment by segment, each verified before any of its
 * bytes is handed out. `firstSegment` numbers the first one (for messages about a part of a body).
 */
export async function* decryptBody(
  reader: ByteReader,
  dataKeys: readonly Buffer[],
  firstSegment = 0,
): AsyncGenerator<Buffer> {
  for (let index = firstSegment; ; index++) {
    const segment = await reader.read(CIPHER_SEGMENT_SIZE);
    if (!segment) return;
    if (segment.length <= NONCE_LENGTH + MAC_LENGTH) {
      throw new Crypt4ghError(
        'truncated',
        `The last segment (${index}) is ${segment.length} bytes: too short to hold a nonce, data and a MAC`,
      );
    }
    yield openSegment(segment, dataKeys, index);
  }
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
