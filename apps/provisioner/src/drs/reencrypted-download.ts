import type { Request, Response } from 'express';
import { Readable } from 'node:stream';
import { Crypt4ghError, parsePublicKey } from '@app/crypt4gh';
import { answerHead, pipeWhileAllowed, type SendingCheck, type Served } from './byte-ranges';
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

/** A stored Crypt4GH file as one reader receives it: a header for their key, then the body. */
export interface ReencryptedTarget {
  /** The header made for this reader (a new one every request: its writer key is fresh). */
  header: Buffer;
  /** The stored body's size in bytes. */
  bodySize: number;
  /** The body's bytes from `start` to `end` inclusive, in order. */
  readBody(start: number, end: number): AsyncIterable<Buffer>;
  /** The file's name with `.c4gh` (what SDA's download names it). */
  name: string;
}

/**
 * Sends the reader's Crypt4GH stream (header, then body), one HTTP range of it at a time as SDA
 * does: Content-Length and ranges count the stream's bytes. The ETag is the header's SHA-256
 * and so changes with every request (as SDA's): If-Range never mixes two headers' bytes.
 */
export async function sendReencrypted(
  req: Request,
  res: Response,
  target: ReencryptedTarget & { etag: string },
  check?: SendingCheck,
): Promise<Served | undefined> {
  const { header } = target;
  const size = header.length + target.bodySize;
  const range = answerHead(req, res, size, target.etag, target.name);
  if (range === undefined) return undefined;
  const { start, end } = range;
  async function* stream(): AsyncGenerator<Buffer> {
    if (start < header.length) yield header.subarray(start, Math.min(end + 1, header.length));
    if (end >= header.length) {
      yield* target.readBody(Math.max(0, start - header.length), end - header.length);
    }
  }
  return { start, bytes: await pipeWhileAllowed(res, Readable.from(stream()), check) };
}
