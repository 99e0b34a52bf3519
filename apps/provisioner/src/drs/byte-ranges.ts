import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import type { Request, Response } from 'express';
import type { Readable } from 'node:stream';
import { DrsError } from './drs-errors';

/**
 * A served file is read this much at a time, into one of two buffers that its download keeps
 * (one filled from the file while the other is written to the socket): 2 MiB per download at
 * most, less for a range shorter than this. At SLOW_READERS_MAX (32) downloads that is 64 MiB,
 * as much as a read stream with a 1 MiB read-ahead holds (docs/decisions/drs-bench-ceiling.md).
 */
export const READ_CHUNK_BYTES = 1024 * 1024;

/**
 * A download's first read: this much, so that the answer's head and first bytes are in the
 * socket's hands while the next full buffer is read, instead of after a whole buffer's read
 * (docs/decisions/drs-range-first-byte.md).
 */
export const FIRST_READ_BYTES = 64 * 1024;

/**
 * Pairs of full-size buffers kept for the next download once a download that completed is
 * done with them (at most this many: 8 MiB held while no file is sent). A new pair is memory
 * mapped, faulted in and zeroed by the kernel page by page on its first read, then unmapped
 * when dropped; that cost fell on every download before its first byte.
 */
export const SPARE_BUFFER_PAIRS = 4;
const spareBuffers: Buffer[][] = [];

/**
 * A read buffer that starts on a memory page. The kernel copies each read from the page cache
 * into it and each write from it into the socket, and on the AMD EPYC hosts measured those
 * copies take twice the CPU when the buffer starts a few bytes past a page boundary (8 or 16
 * bytes; 0 and 32 bytes on are fast). That is where malloc puts a block it maps on its own,
 * which with the image's mmap threshold (128 KiB) is every read buffer from
 * `Buffer.allocUnsafeSlow`. V8 maps a resizable ArrayBuffer itself, page by page, so it starts
 * on a page whatever the allocator does (docs/decisions/drs-read-buffer-alignment.md). Outside
 * Node's shared pool, zeroed by the kernel; reused for the whole download, then kept or dropped.
 */
function pageAlignedBuffer(size: number): Buffer {
  return Buffer.from(new ResizableArrayBuffer(size, { maxByteLength: size }));
}

/** ArrayBuffer's constructor with ES2024's options (the project compiles against ES2023's). */
const ResizableArrayBuffer = ArrayBuffer as unknown as new (
  size: number,
  options: { maxByteLength: number },
) => ArrayBuffer;

/** A pair of read buffers: spare full-size ones, or new ones of `size` (a short range's). */
function takeBuffers(size: number): Buffer[] {
  if (size === READ_CHUNK_BYTES) {
    const spare = spareBuffers.pop();
    if (spare !== undefined) return spare;
  }
  return [pageAlignedBuffer(size), pageAlignedBuffer(size)];
}

/** Keeps a full-size pair no write holds any more for the next download, while there is room. */
function giveBack(buffers: Buffer[]): void {
  if (buffers[0].length === READ_CHUNK_BYTES && spareBuffers.length < SPARE_BUFFER_PAIRS) {
    spareBuffers.push(buffers);
  }
}

/** How many buffer pairs are kept for the next downloads (for the specs). */
export function spareBufferPairs(): number {
  return spareBuffers.length;
}

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
 * Runs `use` on a stored file opened without following links, only while it is still the
 * regular file of `size` bytes its provenance records (anything else in its place is not
 * served: 404); the file is closed once `use` has settled.
 */
export async function withStoredFile<T>(
  file: string,
  size: number,
  use: (handle: FileHandle) => Promise<T>,
): Promise<T> {
  const handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW).catch(() => null);
  if (handle === null) throw new DrsError(404, 'not_found', 'The object is no longer stored');
  try {
    const stat = await handle.stat();
    if (!stat.isFile() || stat.size !== size) {
      throw new DrsError(404, 'not_found', 'The object is no longer stored as recorded');
    }
    return await use(handle);
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/**
 * Sends a stored file (withStoredFile). While it is sent, `check` is asked again and again; a
 * refusal cuts the answer (a revoked grant ends a download under way), a check that cannot
 * answer leaves it running. Resolves, once the answer has ended, with what was sent (undefined
 * for a HEAD or an empty file: no bytes).
 */
export function sendFile(
  req: Request,
  res: Response,
  file: { file: string; size: number; etag: string; name: string },
  check?: SendingCheck,
): Promise<Served | undefined> {
  return withStoredFile(file.file, file.size, async (handle) => {
    const range = answerHead(req, res, file.size, file.etag, file.name);
    if (range === undefined) return undefined;
    return { start: range.start, bytes: await copyWhileAllowed(res, handle, range, check) };
  });
}

/**
 * Writes bytes `range.start`..`range.end` of `handle` into the answer while `check` allows it
 * (as pipeWhileAllowed). Two buffers, each reused: the next one is read from the file while the
 * previous one is in the socket's hands, and a buffer is read into again only once its write has
 * completed (Node hands the socket the buffer itself, not a copy). No stream machinery sits
 * between the file and the socket, and no memory is allocated per read. A client that stops
 * reading leaves the last write pending: nothing more is read, and the slow-reader time-out
 * (armed on the answer, reset by the socket whenever the kernel takes more) cuts it. Resolves
 * once the answer is closed, with the bytes handed to it.
 */
export async function copyWhileAllowed(
  res: Response,
  handle: FileHandle,
  range: { start: number; end: number },
  check?: SendingCheck,
): Promise<number> {
  const total = range.end - range.start + 1;
  const size = Math.min(READ_CHUNK_BYTES, total);
  const buffers = takeBuffers(size);
  // A client gone while the file was opened: its answer closed before anything was written.
  let closed = res.destroyed;
  /** Settles the write in flight: by its callback, or as failed once the answer is closed. */
  let settleWrite: ((written: boolean) => void) | undefined;
  const gone = new Promise<void>((resolve) => {
    if (closed) return resolve();
    res.once('close', () => {
      closed = true;
      settleWrite?.(false);
      resolve();
    });
  });
  const recheck = cutWhenRefused(res, check);
  let handed = 0;
  /** The write in flight: true once the socket has taken it, false if it failed. */
  let writing: Promise<boolean> = Promise.resolve(true);
  try {
    for (let next = 0; handed < total && !closed; next ^= 1) {
      const buffer = buffers[next];
      // This buffer's last write was awaited before the other buffer's was issued: it is free.
      const want = Math.min(handed === 0 ? FIRST_READ_BYTES : size, total - handed);
      const { bytesRead } = await handle.read(buffer, 0, want, range.start + handed);
      // Shorter than its recorded size (checked when opened): the answer cannot be completed.
      if (bytesRead === 0) throw new Error('The stored file ended before its recorded size');
      if (!(await writing) || closed) break;
      const chunk = bytesRead === buffer.length ? buffer : buffer.subarray(0, bytesRead);
      writing = new Promise<boolean>((resolve) => {
        settleWrite = resolve;
        res.write(chunk, (error) => resolve(!error));
      });
      handed += bytesRead;
    }
    if (handed === total && !closed) {
      res.end();
      // Every write has completed (each was awaited before the next, the last just now): no
      // socket holds these buffers, so the next download may read into them.
      if (await writing) giveBack(buffers);
    }
  } catch {
    // A read failing mid-way ends the answer before its Content-Length, once what was read
    // before it is in the socket's hands.
    await writing;
    res.destroy();
  }
  await gone;
  clearInterval(recheck);
  return handed;
}

/**
 * Asks `check` every `check.everyMs` whether the answer may go on, and cuts it on a refusal (a
 * revoked grant ends a download under way); a check that cannot answer leaves it running. The
 * caller clears the timer when the answer is done.
 */
function cutWhenRefused(res: Response, check?: SendingCheck): NodeJS.Timeout | undefined {
  if (check === undefined) return undefined;
  return setInterval(() => {
    check.stillAllowed().then(
      (allowed) => allowed || res.destroy(),
      () => undefined,
    );
  }, check.everyMs).unref();
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
  const recheck = cutWhenRefused(res, check);
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
