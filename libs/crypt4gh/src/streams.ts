/**
 * Whole Crypt4GH streams: encrypt for readers, decrypt with secret keys, re-wrap a header for new
 * readers, and the header plus segments that give a reader exactly plain-text bytes a..b.
 * Sources are Node Readables or any async iterables of chunks; results are async generators
 * (`Readable.from(...)` makes a stream of one). Nothing holds more than one segment.
 */
import { ByteReader, ByteSource } from './byte-reader';
import { applyEditList, decryptBody, encryptBody, SegmentDecryptor } from './body';
import { newDataKey } from './random';
import { CIPHER_SEGMENT_SIZE, Crypt4ghError, SEGMENT_SIZE, bodySize } from './format';
import {
  buildHeader,
  OpenedHeader,
  openHeader,
  readHeaderPackets,
  secretKey,
  SecretKey,
} from './header';

export interface Encryption {
  /** The header, for every reader. Stored apart from the body, as an archive does, or sent first. */
  header: Buffer;
  /** The body of the source, segment by segment, as it is read. */
  body: AsyncGenerator<Buffer>;
}

/** `source` encrypted for `readers` (public keys), under a data key made for this stream alone. */
export function encryptStream(source: ByteSource, readers: readonly Uint8Array[]): Encryption {
  const dataKey = newDataKey();
  const header = buildHeader({ dataKeys: [dataKey] }, readers);
  return { header, body: encryptBody(source, dataKey) };
}

/** `source` as one Crypt4GH file for `readers`: the header, then the body. */
export async function* encrypt(
  source: ByteSource,
  readers: readonly Uint8Array[],
): AsyncGenerator<Buffer> {
  const { header, body } = encryptStream(source, readers);
  yield header;
  yield* body;
}

function keysOf(secrets: readonly Uint8Array[]): SecretKey[] {
  if (secrets.length === 0)
    throw new Crypt4ghError('no-key', 'Decryption needs at least one secret key');
  return secrets.map(secretKey);
}

export interface OpenedStream {
  header: OpenedHeader;
  /** Bytes of the header as it was read. */
  headerLength: number;
  /** The body's cipher-text, not read yet. */
  reader: ByteReader;
}

/** Reads and opens the header at the start of `source` with `secrets`; the body is left unread. */
export async function openStream(
  source: ByteSource,
  secrets: readonly Uint8Array[],
): Promise<OpenedStream> {
  const keys = keysOf(secrets);
  const reader = new ByteReader(source);
  const packets = await readHeaderPackets(reader);
  return { header: openHeader(packets, keys), headerLength: reader.position, reader };
}

/**
 * The plain-text of a Crypt4GH stream (header and body), or of a body whose header is given apart
 * (`header`), with the header's edit list applied. Refused as soon as it is seen: a malformed
 * header, no data key for `secrets`, a segment whose MAC fails, an edit list past the end.
 */
export async function* decrypt(
  source: ByteSource,
  secrets: readonly Uint8Array[],
  options: { header?: Uint8Array } = {},
): AsyncGenerator<Buffer> {
  let opened: OpenedHeader;
  let reader: ByteReader;
  if (options.header) {
    const headerReader = new ByteReader([options.header]);
    opened = openHeader(await readHeaderPackets(headerReader), keysOf(secrets));
    if (!(await headerReader.atEnd()))
      throw new Crypt4ghError('trailing-bytes', 'Bytes follow the last packet of the given header');
    reader = new ByteReader(source);
  } else {
    ({ header: opened, reader } = await openStream(source, secrets));
  }
  if (opened.editList) {
    yield* applyEditList(decryptBody(reader, opened.dataKeys), opened.editList);
    return;
  }
  // decryptBody's loop, here: delegating to it would add an await to every segment handed out.
  const decryptor = new SegmentDecryptor(opened.dataKeys);
  for await (const chunk of reader.rest()) {
    decryptor.feed(chunk);
    for (let plain = decryptor.next(); plain !== undefined; plain = decryptor.next()) yield plain;
  }
  const last = decryptor.end();
  if (last !== undefined) yield last;
}

/**
 * A Crypt4GH stream re-wrapped for `readers`: a new header with the same data keys (and edit list),
 * then the body's bytes exactly as they came. No segment is decrypted.
 */
export async function* rewrap(
  source: ByteSource,
  secrets: readonly Uint8Array[],
  readers: readonly Uint8Array[],
): AsyncGenerator<Buffer> {
  const { header, reader } = await openStream(source, secrets);
  yield buildHeader(header, readers);
  yield* reader.rest();
}

/**
 * The header at the start of `bytes` (the first bytes of a Crypt4GH stream, as they arrive) and
 * its length, or undefined while `bytes` ends before the header does. A malformed header is
 * refused as soon as enough of it is there to tell, and its packets' lengths are checked before
 * any is held (readHeaderPackets), so a writer can keep adding bytes until this answers.
 */
export async function headerAt(
  bytes: Uint8Array,
): Promise<{ packets: Buffer[]; length: number } | undefined> {
  const reader = new ByteReader([bytes]);
  try {
    const packets = await readHeaderPackets(reader);
    return { packets, length: reader.position };
  } catch (error) {
    if (error instanceof Crypt4ghError && error.fault === 'truncated') return undefined;
    throw error;
  }
}

export interface PlaintextRange {
  /** The header for the reader: the data keys and an edit list selecting bytes start..end. */
  header: Buffer;
  /** The segments to send after it, first to last inclusive. */
  firstSegment: number;
  lastSegment: number;
  /** Those segments' place in the stored body: bytes bodyStart..bodyEnd - 1. */
  bodyStart: number;
  bodyEnd: number;
}

/**
 * What gives `readers` exactly the plain-text bytes `start`..`end` (inclusive) of a stored file of
 * `size` plain-text bytes whose header opened as `header`: a header carrying its data keys and an
 * edit list, and the whole segments holding those bytes (at most two more segments than the
 * range). The reference decryptor outputs exactly those bytes.
 */
export function plaintextRange(
  header: Pick<OpenedHeader, 'dataKeys' | 'editList'>,
  size: number,
  start: number,
  end: number,
  readers: readonly Uint8Array[],
): PlaintextRange {
  if (header.editList !== undefined) {
    throw new Crypt4ghError(
      'unsupported',
      'A range of a file that already has an edit list is not supported',
    );
  }
  if (
    !Number.isSafeInteger(start) ||
    !Number.isSafeInteger(end) ||
    start < 0 ||
    end < start ||
    end >= size
  ) {
    throw new Crypt4ghError(
      'edit-list-past-end',
      `Bytes ${start}-${end} are not a range of a ${size}-byte file`,
    );
  }
  const firstSegment = Math.floor(start / SEGMENT_SIZE);
  const lastSegment = Math.floor(end / SEGMENT_SIZE);
  const editList = [start - firstSegment * SEGMENT_SIZE, end - start + 1];
  return {
    header: buildHeader({ dataKeys: header.dataKeys, editList }, readers),
    firstSegment,
    lastSegment,
    bodyStart: firstSegment * CIPHER_SEGMENT_SIZE,
    bodyEnd: Math.min((lastSegment + 1) * CIPHER_SEGMENT_SIZE, bodySize(size)),
  };
}
