import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import type { Request, Response } from 'express';
import type { Readable } from 'node:stream';
import { DrsError } from './drs-errors';

/** Read buffer of a served file: large reads keep a gigabyte stream near the disk's speed. */
const READ_CHUNK_BYTES = 1024 * 1024;

/** A single `bytes=` range resolved against `size`: [start, end] inclusive, or a refusal. */
export function rangeOf(
  header: string | undefined,
  size: number,
): { start: number; end: number } | 'whole' | 'unsatisfiable' {
  if (header === undefined) return 'whole';
  const match = /^bytes=(\d{0,19})-(\d{0,19})$/.exec(header.trim());
  // Several ranges, or another unit: answered whole, as RFC 9110 §14.2 allows.
  if (match === null) return 'whole';
  const [, first, last] = match;
  if (first === '' && last === '') return 'whole';
  if (first === '') {
    const suffix = Number(last);
    if (suffix === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(first);
  if (start >= size) return 'unsatisfiable';
  const end = last === '' ? size - 1 : Math.min(Number(last), size - 1);
  if (end < start) return 'whole';
  return { start, end };
}

/**
 * Answers a GET or HEAD of `size` bytes with the headers a range reader needs (Accept-Ranges,
 * ETag, Content-Length; 206 with Content-Range for one satisfiable range, 416 past the end), and
 * returns the range to send (undefined: nothing more to send).
 */
export function answerHead(
  req: Request,
  res: Response,
  size: number,
  etag: string,
  name: string,
): { start: number; end: number } | undefined {
  const ifRange = req.headers['if-range'];
  // A range is for the version the client has: another version is sent whole.
  const range =
    ifRange !== undefined && ifRange !== etag ? 'whole' : rangeOf(req.headers.range, size);
  res.setHeader('Accept-Ranges', 'bytes');
  res.setHeader('ETag', etag);
  res.setHeader('Cache-Control', 'private, no-store');
  res.setHeader('Content-Disposition', `attachment; filename="${name}"`);
  if (range === 'unsatisfiable') {
    res.setHeader('Content-Range', `bytes */${size}`);
    throw new DrsError(
      416,
      'range_not_satisfiable',
      `The range is past the end of the object (${size} bytes)`,
    );
  }
  const { start, end } = range === 'whole' ? { start: 0, end: size - 1 } : range;
  if (range !== 'whole') {
    res.status(206);
    res.setHeader('Content-Range', `bytes ${start}-${end}/${size}`);
  } else res.status(200);
  res.setHeader('Content-Length', String(Math.max(0, end - start + 1)));
  res.setHeader('Content-Type', 'application/octet-stream');
  if (req.method === 'HEAD' || size === 0) {
    res.end();
    return undefined;
  }
  return { start, end };
}

/** Asked every `everyMs` while a file is sent: false ends the answer (its connection closed). */
export interface SendingCheck {
  everyMs: number;
  stillAllowed: () => Promise<boolean>;
}

/** What an answer sent: its first byte and how many bytes were handed to the connection. */
export interface Served {
  start: number;
  bytes: number;
}

/**
 * Sends a stored file: opened without following links, and only while it is still the regular
 * file of the size its provenance records (anything else in its place is not served). While it
 * is sent, `check` is asked again and again; a refusal cuts the answer (a revoked grant ends a
 * download under way), a check that cannot answer leaves it running. Resolves, once the answer
 * has ended, with what was sent (undefined for a HEAD or an empty file: no bytes).
 */
export async function sendFile(
  req: Request,
  res: Response,
  file: { file: string; size: number; etag: string; name: string },
  check?: SendingCheck,
): Promise<Served | undefined> {
  const handle = await open(file.file, constants.O_RDONLY | constants.O_NOFOLLOW).catch(() => null);
  if (handle === null) throw new DrsError(404, 'not_found', 'The object is no longer stored');
  try {
    const stat = await handle.stat();
    if (!stat.isFile() || stat.size !== file.size) {
      throw new DrsError(404, 'not_found', 'The object is no longer stored as recorded');
    }
    const range = answerHead(req, res, file.size, file.etag, file.name);
    if (range === undefined) return undefined;
    const stream = handle.createReadStream({
      start: range.start,
      end: range.end,
      highWaterMark: READ_CHUNK_BYTES,
      autoClose: true,
    });
    return { start: range.start, bytes: await pipeWhileAllowed(res, stream, check) };
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/**
 * Pipes `stream` into the answer while `check` (asked every `check.everyMs`) allows it: a refusal
 * cuts the answer (a revoked grant ends a download under way), a check that cannot answer leaves
 * it running. Resolves once the answer is closed, the stream destroyed, with the bytes read and
 * handed to the answer (a client gone mid-way is counted up to where it left).
 */
export async function pipeWhileAllowed(
  res: Response,
  stream: Readable,
  check?: SendingCheck,
): Promise<number> {
  let handed = 0;
  const recheck =
    check === undefined
      ? undefined
      : setInterval(() => {
          check.stillAllowed().then(
            (allowed) => allowed || res.destroy(),
            () => undefined,
          );
        }, check.everyMs).unref();
  await new Promise<void>((resolve) => {
    // A client that goes away stops the read.
    res.once('close', () => {
      clearInterval(recheck);
      stream.destroy();
      resolve();
    });
    // A read failing mid-way ends the answer before its Content-Length.
    stream.once('error', () => res.destroy());
    stream.on('data', (chunk: string | Buffer) => {
      handed += chunk.length;
    });
    stream.pipe(res);
  });
  return handed;
}
