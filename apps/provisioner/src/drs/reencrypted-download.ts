import type { Request, Response } from 'express';
import { Readable } from 'node:stream';
import { createHash } from 'node:crypto';
import {
  applyEditList,
  bodySize,
  buildHeader,
  ByteReader,
  CIPHER_SEGMENT_SIZE,
  Crypt4ghError,
  decryptBody,
  parsePublicKey,
  plaintextRange,
  SEGMENT_SIZE,
} from '@app/crypt4gh';
import {
  answerHead,
  copyWhileAllowed,
  pipeWhileAllowed,
  type SendingCheck,
  type Served,
  withStoredFile,
} from './byte-ranges';
import { DrsError } from './drs-errors';

/**
 * The request headers a reader's Crypt4GH public key comes in, as NeIC SDA's download takes it
 * (sda/cmd/download/download.md): the key file (or the raw 32 bytes), base64-encoded.
 */
export const READER_KEY_HEADERS = ['x-c4gh-public-key', 'htsget-context-public-key'] as const;

/** The reader's public key from the request, undefined when it sent none; 400 when malformed. */
export function readerKeyOf(req: Request): Buffer | undefined {
  const given = READER_KEY_HEADERS.filter((name) => req.headers[name] !== undefined);
  if (given.length === 0) return undefined;
  if (given.length > 1) {
    throw new DrsError(
      400,
      'c4gh_key_conflict',
      'Send the Crypt4GH public key in one of X-C4GH-Public-Key and Htsget-Context-Public-Key, not both',
    );
  }
  const value = String(req.headers[given[0]]).trim();
  try {
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(value)) throw new Crypt4ghError('bad-key', 'not base64');
    return parsePublicKey(Buffer.from(value, 'base64'));
  } catch (error) {
    if (!(error instanceof Crypt4ghError)) throw error;
    throw new DrsError(
      400,
      'c4gh_key_invalid',
      `${given[0]} must be a Crypt4GH public key file, base64-encoded (${error.message})`,
    );
  }
}

/** The request header a reader asks for exact plain-text bytes in (beside its public key). */
export const PLAINTEXT_RANGE_HEADER = 'x-c4gh-plaintext-range';

/** What a reader asked of a Crypt4GH object: its key, and plain-text bytes if it named some. */
export interface ReaderRequest {
  /** The reader's public key (X-C4GH-Public-Key or Htsget-Context-Public-Key). */
  key?: Buffer;
  /** X-C4GH-Plaintext-Range as sent; resolved against the object's size (plaintextRangeIn). */
  plaintextRange?: string;
}

export function readerRequestOf(req: Request): ReaderRequest {
  const range = req.headers[PLAINTEXT_RANGE_HEADER];
  return {
    key: readerKeyOf(req),
    ...(range === undefined ? {} : { plaintextRange: String(range) }),
  };
}

/**
 * X-C4GH-Plaintext-Range resolved against a plain-text of `size` bytes, as one HTTP range is
 * (RFC 9110 §14.1.2): `bytes=a-b`, `bytes=a-` or `bytes=-n`, a last byte past the end meaning
 * the end. Anything else is a 400, a range starting past the end a 416; both name the object.
 */
export function plaintextRangeIn(
  value: string,
  size: number,
  path: string,
): { start: number; end: number } {
  const match = /^bytes=(\d{0,15})-(\d{0,15})$/.exec(value.trim());
  const [first, last] = match === null ? ['', ''] : [match[1], match[2]];
  if (
    (first === '' && last === '') ||
    (first !== '' && last !== '' && Number(last) < Number(first)) ||
    (first === '' && Number(last) === 0)
  ) {
    throw new DrsError(
      400,
      'c4gh_range_invalid',
      `X-C4GH-Plaintext-Range must be one range of plain-text bytes, bytes=first-last (or bytes=first-, bytes=-suffix), first <= last: "${value.slice(0, 100)}" is not (${path})`,
      { path },
    );
  }
  const start = first === '' ? Math.max(0, size - Number(last)) : Number(first);
  if (start >= size) {
    throw new DrsError(
      416,
      'c4gh_range_not_satisfiable',
      `X-C4GH-Plaintext-Range starts past the end of ${path} (${size} plain-text bytes)`,
      { path, size },
    );
  }
  const end = first === '' || last === '' ? size - 1 : Math.min(Number(last), size - 1);
  return { start, end };
}

/**
 * A stored Crypt4GH file as it is sent: re-encrypted for a reader (a header for their key, then
 * the stored body or the segments of a plain-text range) or, where DRS_PLAINTEXT_DOWNLOADS
 * allows it, decrypted.
 */
export interface Crypt4ghTarget {
  /** Bytes of the whole answer (HTTP ranges count these). */
  size: number;
  /** The answer's bytes `start` to `end` inclusive, in order. */
  read(start: number, end: number): AsyncIterable<Buffer>;
  /** A re-encrypted stream: `<name>.c4gh` (what SDA's download names it); decrypted: the name. */
  name: string;
  /**
   * Re-encrypted: the header's SHA-256, new every request (as SDA's), so If-Range never mixes
   * two headers' bytes. Decrypted: the plain-text's SHA-256.
   */
  etag: string;
  /** With X-C4GH-Plaintext-Range: the plain-text bytes the edit list selects, and the size. */
  plaintext?: { start: number; end: number; size: number };
  /**
   * Re-encrypted from a body stored as a file on this host: the header, then the file's bytes
   * from `offset`, which sendCrypt4gh copies from the file to the socket as a plain file is
   * sent, instead of through `read` (the same bytes).
   */
  bodyFile?: StoredBodyFile;
}

/** A stored body on this host, as a re-encrypted answer sends it (Crypt4ghTarget.bodyFile). */
export interface StoredBodyFile {
  file: string;
  /** The body's recorded size: a file of another size is no longer stored as recorded. */
  size: number;
  /** Where the answer's body bytes start in the file (a plain-text range's first segment). */
  offset: number;
  /** The reader's header, sent before them. */
  header: Buffer;
}

/** The stream a reader receives: `header`, then `bodyLength` bytes read by `readBody`. */
export function reencryptedStream(
  header: Buffer,
  bodyLength: number,
  readBody: (start: number, end: number) => AsyncIterable<Buffer>,
): Pick<Crypt4ghTarget, 'size' | 'read' | 'etag'> {
  return {
    size: header.length + bodyLength,
    etag: `"${createHash('sha256').update(header).digest('hex')}"`,
    async *read(start, end) {
      if (start < header.length) yield header.subarray(start, Math.min(end + 1, header.length));
      if (end >= header.length)
        yield* readBody(Math.max(0, start - header.length), end - header.length);
    },
  };
}

/**
 * Plain-text bytes `start`..`end` of a body of `size` plain-text bytes under `dataKeys`: only the
 * segments holding them are read, each verified before any of its bytes is sent.
 */
export async function* decryptedRange(
  dataKeys: readonly Buffer[],
  size: number,
  start: number,
  end: number,
  readBody: (start: number, end: number) => AsyncIterable<Buffer>,
): AsyncGenerator<Buffer> {
  const first = Math.floor(start / SEGMENT_SIZE);
  const bodyStart = first * CIPHER_SEGMENT_SIZE;
  const bodyEnd = Math.min(
    (Math.floor(end / SEGMENT_SIZE) + 1) * CIPHER_SEGMENT_SIZE,
    bodySize(size),
  );
  const plain = decryptBody(new ByteReader(readBody(bodyStart, bodyEnd - 1)), dataKeys, first);
  yield* applyEditList(plain, [start - first * SEGMENT_SIZE, end - start + 1]);
}

/** A file stored in archive mode, as far as sending it goes. */
export interface StoredCrypt4gh {
  /** Its data keys (its stored header opened with the archive key). */
  dataKeys: Buffer[];
  /** Plain-text bytes. */
  size: number;
  /** The plain-text's SHA-256, hex. */
  sha256: string;
  /** Its name (a portable file name). */
  name: string;
}

/**
 * What a stored Crypt4GH file answers: for a reader's `key`, a new header for it (same data keys;
 * nothing decrypted) and the stored body, or with a plain-text `range`, a header whose edit list
 * selects exactly those bytes and the segments holding them (at most two more segments than the
 * range); without a key, the plain-text (the caller has checked that it may be sent).
 * `readBody(start, end)` reads the stored body's bytes start..end inclusive; `bodyFile`, the body's
 * path where it is a file on this host, lets a re-encrypted answer be sent from it directly.
 */
export function crypt4ghTarget(
  stored: StoredCrypt4gh,
  reader: { key?: Buffer; range?: { start: number; end: number } },
  readBody: (start: number, end: number) => AsyncIterable<Buffer>,
  bodyFile?: string,
): Crypt4ghTarget {
  const { dataKeys, size, name } = stored;
  if (reader.key === undefined) {
    return {
      size,
      etag: `"${stored.sha256}"`,
      name,
      read: (start, end) => decryptedRange(dataKeys, size, start, end, readBody),
    };
  }
  if (reader.range === undefined) {
    const header = buildHeader({ dataKeys }, [reader.key]);
    return {
      ...reencryptedStream(header, bodySize(size), readBody),
      name: `${name}.c4gh`,
      ...(bodyFile === undefined
        ? {}
        : { bodyFile: { file: bodyFile, size: bodySize(size), offset: 0, header } }),
    };
  }
  const { start, end } = reader.range;
  const part = plaintextRange({ dataKeys }, size, start, end, [reader.key]);
  const offset = part.bodyStart;
  return {
    ...reencryptedStream(part.header, part.bodyEnd - part.bodyStart, (from, to) =>
      readBody(offset + from, offset + to),
    ),
    name: `${name}.c4gh`,
    plaintext: { start, end, size },
    ...(bodyFile === undefined
      ? {}
      : { bodyFile: { file: bodyFile, size: bodySize(size), offset, header: part.header } }),
  };
}

/**
 * Sends a Crypt4GH target one HTTP range at a time, as SDA does for its re-encrypted stream:
 * Content-Length and ranges count the answer's bytes.
 */
export async function sendCrypt4gh(
  req: Request,
  res: Response,
  target: Crypt4ghTarget,
  check?: SendingCheck,
): Promise<Served | undefined> {
  const plain = target.plaintext;
  // Beside Content-Range: the plain-text bytes this stream decrypts to.
  if (plain !== undefined) {
    res.setHeader(
      'X-C4GH-Plaintext-Content-Range',
      `bytes ${plain.start}-${plain.end}/${plain.size}`,
    );
  }
  if (target.bodyFile !== undefined)
    return sendFromBodyFile(req, res, target, target.bodyFile, check);
  const range = answerHead(req, res, target.size, target.etag, target.name);
  if (range === undefined) return undefined;
  const { start, end } = range;
  const stream = Readable.from(target.read(start, end));
  return { start, bytes: await pipeWhileAllowed(res, stream, check) };
}

/**
 * A re-encrypted answer whose body is a file on this host: the header's part of the range
 * written, then the body's part copied from the file as a plain file is sent (copyWhileAllowed:
 * two reused buffers, no stream between file and socket). Measured (issue 57 item 6): through
 * `read` (a new buffer and an open and close of the file per MiB, then a Readable) a
 * re-encrypted download ran at a quarter of a plain one.
 */
function sendFromBodyFile(
  req: Request,
  res: Response,
  target: Crypt4ghTarget,
  body: StoredBodyFile,
  check?: SendingCheck,
): Promise<Served | undefined> {
  return withStoredFile(body.file, body.size, async (handle) => {
    const range = answerHead(req, res, target.size, target.etag, target.name);
    if (range === undefined) return undefined;
    const { start, end } = range;
    const sending = partsOf(body, start, end);
    let written = 0;
    if (sending.header !== undefined) {
      res.write(sending.header);
      written = sending.header.length;
    }
    if (sending.body === undefined) {
      res.end();
      return { start, bytes: written };
    }
    return { start, bytes: written + (await copyWhileAllowed(res, handle, sending.body, check)) };
  });
}

/** Answer bytes `start`..`end`: the header's bytes among them, and the body file's byte range. */
function partsOf(
  body: StoredBodyFile,
  start: number,
  end: number,
): { header?: Buffer; body?: { start: number; end: number } } {
  const headerLength = body.header.length;
  const header = start < headerLength ? body.header.subarray(start, end + 1) : undefined;
  if (end < headerLength) return { header };
  return {
    header,
    body: {
      start: body.offset + Math.max(0, start - headerLength),
      end: body.offset + end - headerLength,
    },
  };
}
