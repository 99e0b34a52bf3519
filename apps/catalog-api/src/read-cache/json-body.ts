import { createHash } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { CachedResponse, ownedCopy } from './response-cache';

/**
 * An array a handler hands over page by page instead of whole: the read cache writes each page
 * to the body as it comes and lets it go, so a list of 50,000 records never exists as objects,
 * as one JSON string and as bytes at the same time. Pages are read inside the read's snapshot.
 */
export class JsonPages<T = unknown> {
  constructor(readonly pages: AsyncIterable<readonly T[]>) {}
}

/** JsonPages whose items are JSON text already (written by the database): copied as they are. */
export class JsonTextPages extends JsonPages<string> {}

/**
 * Size of the buffers the body is written into. Each piece of JSON text is encoded straight into
 * one: joining texts into large strings first would put every megabyte on the V8 heap again
 * (large strings go to the old generation, and their churn cost a 50,000-dataset list more time
 * in the garbage collector than in serialising).
 */
const CHUNK_BYTES = 1024 * 1024;

/**
 * Encodes JSON text into owned UTF-8 chunks. Each chunk is hashed for the entity tag as soon as
 * it is full, while later pages are still being read: hashing 100 MB takes about 0.1 s, which
 * would otherwise come after the last page.
 */
class ChunkWriter {
  readonly chunks: Buffer[] = [];
  readonly hash = createHash('sha256');
  bytes = 0;
  private chunk: Buffer | null = null;
  private used = 0;

  push(text: string): void {
    if (text.length === 0) return;
    const room = this.chunk === null ? 0 : this.chunk.length - this.used;
    // At most three bytes per UTF-16 unit: only a text that may not fit is measured.
    const size = 3 * text.length <= room ? 0 : Buffer.byteLength(text);
    if (size > room) {
      this.flush();
      this.chunk = Buffer.allocUnsafeSlow(Math.max(CHUNK_BYTES, size));
    }
    this.used += this.chunk!.write(text, this.used);
  }

  flush(): void {
    if (this.chunk === null || this.used === 0) return;
    // A chunk mostly empty (a small body, the end of a large one) is copied to its own
    // allocation of the right size, so a cached answer of 40 bytes does not keep a megabyte.
    const used = this.chunk.subarray(0, this.used);
    this.chunks.push(this.used * 2 < this.chunk.length ? ownedCopy(used) : used);
    this.hash.update(used);
    this.bytes += this.used;
    this.chunk = null;
    this.used = 0;
  }
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype;

/** Whether `value` or one of its own properties is a JsonPages (the only places one is read). */
const holdsPages = (value: unknown): boolean =>
  value instanceof JsonPages ||
  (isPlainObject(value) && Object.values(value).some((v) => v instanceof JsonPages));

async function write(value: unknown, out: ChunkWriter): Promise<void> {
  if (value instanceof JsonPages) {
    out.push('[');
    let first = true;
    for await (const page of (value as JsonPages).pages) {
      for (const item of page) {
        if (!first) out.push(',');
        // As JSON.stringify writes an array: what has no JSON form is null.
        out.push(
          value instanceof JsonTextPages ? (item as string) : (JSON.stringify(item) ?? 'null'),
        );
        first = false;
      }
    }
    out.push(']');
    return;
  }
  if (!holdsPages(value)) {
    out.push(JSON.stringify(value) ?? '');
    return;
  }
  out.push('{');
  let first = true;
  for (const [name, item] of Object.entries(value as Record<string, unknown>)) {
    const text = item instanceof JsonPages ? '' : JSON.stringify(item);
    // As JSON.stringify writes an object: a property with no JSON form is left out.
    if (text === undefined) continue;
    out.push(`${first ? '' : ','}${JSON.stringify(name)}:${text}`);
    first = false;
    if (item instanceof JsonPages) await write(item, out);
  }
  out.push('}');
}

/**
 * The JSON of what a handler returned, as JSON.stringify would write it, with its entity tag.
 * A JsonPages, at the top or as a property of the top-level object, is written page by page.
 */
export async function jsonBody(value: unknown): Promise<CachedResponse> {
  const out = new ChunkWriter();
  await write(value, out);
  out.flush();
  return {
    body: out.chunks,
    bytes: out.bytes,
    etag: `"${out.hash.digest('base64url').slice(0, 32)}"`,
  };
}

/** Weak comparison (RFC 9110 §13.1.2): `If-None-Match` matches with or without W/. */
export function matchesEtag(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  return header
    .split(',')
    .map((tag) => tag.trim().replace(/^W\//, ''))
    .some((tag) => tag === '*' || tag === etag);
}

/** Ends a response whose head is written or set with the chunks of a body, in one write when they fit. */
export function endWithBody(res: ServerResponse, body: readonly Buffer[]): void {
  if (body.length === 1) {
    res.end(body[0]);
    return;
  }
  // Corked: the chunks go out together instead of one system call each. Uncorked before the
  // end: on Node 24 an answer ended while corked sends chunked encoding's last chunk before the
  // corked ones (the client reads a body cut short, then data after it).
  res.cork();
  for (const chunk of body) res.write(chunk);
  res.uncork();
  res.end();
}
