import { createHash, type Hash } from 'node:crypto';
import { PassThrough, Readable } from 'node:stream';
import { ZipFile } from 'yazl';

/** Text produced piece by piece, pulled as the zip is written (never all at once). */
export type Pieces = AsyncIterable<string> | Iterable<string>;

interface Written {
  path: string;
  sha512: string;
  bytes: number;
}

/**
 * A BagIt 1.0 bag (RFC 8493) in one top-level folder of a streamed ZIP, as the Five Safes
 * RO-Crate profile packs a crate: payload files under `data/`, then `bag-info.txt` (with the
 * payload's Payload-Oxum), `manifest-sha512.txt` and `tagmanifest-sha512.txt`, whose checksums
 * are of the bytes as they were written. Each payload file is made while the ZIP is read: yazl
 * asks for a file's stream only when the one before it is done and pipes it with backpressure,
 * so a client that reads slowly slows the producer, and only a chunk or two is in memory.
 */
export class BagItZip {
  private readonly zip = new ZipFile();
  private readonly payload: Written[] = [];
  private readonly tags: Written[] = [];
  private current?: Readable;
  private readonly mtime = new Date();
  /** The ZIP's bytes. Destroy it to stop (a client gone): the producer is stopped too. */
  readonly output: PassThrough;

  constructor(private readonly bag: string) {
    this.output = this.zip.outputStream as PassThrough;
    this.output.on('close', () => this.current?.destroy());
    this.zip.on('error', (error: Error) => this.output.destroy(error));
    this.tag('bagit.txt', ['BagIt-Version: 1.0\nTag-File-Character-Encoding: UTF-8\n']);
  }

  /** A payload file (under `data/`), its text pulled from `pieces` as the ZIP is read. */
  file(path: string, pieces: () => Pieces): void {
    this.add(`data/${path}`, pieces, this.payload);
  }

  /** Closes the bag: bag-info (with `info`), the manifests, the ZIP's directory. */
  finish(info: Record<string, string>): void {
    this.tag('bag-info.txt', () => {
      const bytes = this.payload.reduce((sum, file) => sum + file.bytes, 0);
      const fields = { ...info, 'Payload-Oxum': `${bytes}.${this.payload.length}` };
      return [
        Object.entries(fields)
          .map(([key, value]) => `${key}: ${value}\n`)
          .join(''),
      ];
    });
    const manifest = (files: Written[]) => [
      files.map((file) => `${file.sha512}  ${file.path}\n`).join(''),
    ];
    this.tag('manifest-sha512.txt', () => manifest(this.payload));
    // Every tag file but the tag manifest itself, which is written last.
    this.tag('tagmanifest-sha512.txt', () => manifest(this.tags), false);
    this.zip.end();
  }

  private tag(path: string, pieces: Pieces | (() => Pieces), listed = true): void {
    this.add(path, typeof pieces === 'function' ? pieces : () => pieces, listed ? this.tags : []);
  }

  private add(path: string, pieces: () => Pieces, into: Written[]): void {
    this.zip.addReadStreamLazy(
      `${this.bag}/${path}`,
      { mtime: this.mtime },
      (callback: (error: unknown, stream: NodeJS.ReadableStream) => void) => {
        const hash = createHash('sha512');
        const written: Written = { path, sha512: '', bytes: 0 };
        // One chunk ahead at most: the next page is read only once this one is taken.
        const stream = Readable.from(hashed(pieces(), hash, written), {
          objectMode: false,
          highWaterMark: 1,
        });
        stream.on('end', () => {
          written.sha512 = hash.digest('hex');
          into.push(written);
        });
        // yazl pipes without watching for errors: a failed read ends the ZIP, which the client
        // sees as a broken download rather than a complete one.
        stream.on('error', (error) => this.output.destroy(error));
        this.current = stream;
        callback(null, stream);
      },
    );
  }
}

async function* hashed(pieces: Pieces, hash: Hash, written: Written): AsyncGenerator<Buffer> {
  for await (const piece of pieces) {
    if (piece === '') continue;
    const bytes = Buffer.from(piece, 'utf8');
    hash.update(bytes);
    written.bytes += bytes.length;
    yield bytes;
  }
}
