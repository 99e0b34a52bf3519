import { createReadStream, createWriteStream, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes, randomInt } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  bodySize,
  CIPHER_SEGMENT_SIZE,
  decrypt,
  encryptBody,
  generateKeyPair,
  headerAt,
  KEY_LENGTH,
  secretKeyFile,
  SEGMENT_SIZE,
} from '@app/crypt4gh';
import { referenceDecrypt } from '../../../../test/support/crypt4gh-reference';
import { DrsError } from './drs-errors';
import { crypt4ghTarget, plaintextRangeIn } from './reencrypted-download';

/**
 * Exact plain-text ranges (issue 57 item 4) over a real stored body of 1 GiB and a bit: the answer
 * is a header with an edit list (crypt4gh.tex, "Edit List"; hts-specs#808 serves htsget ranges
 * the same way) and the segments holding the bytes; the reference implementation
 * (EGA-archive/crypt4gh v1.7, crypt4gh/lib.py, `decrypt` then `body_decrypt_parts` for the edit list) decrypts each.
 */

/** 1 GiB and a last, shorter segment. */
const SIZE = 2 ** 30 + 12_345;
const PATTERN_BYTES = 1024 * 1024;
/** Every STAMP_EVERY bytes the plain-text holds its own offset: no two places are alike. */
const STAMP_EVERY = 512;

const pattern = randomBytes(PATTERN_BYTES);

/** The plain-text's bytes start..end inclusive: a random pattern, stamped with offsets. */
function plainBytes(start: number, end: number): Buffer {
  const out = Buffer.allocUnsafe(end - start + 1);
  for (let at = 0; at < out.length;) {
    const from = (start + at) % PATTERN_BYTES;
    at += pattern.copy(out, at, from, Math.min(PATTERN_BYTES, from + out.length - at));
  }
  // From the stamp at or before `start`: a range may begin inside one.
  const stamp = Buffer.alloc(8);
  for (let p = Math.floor(start / STAMP_EVERY) * STAMP_EVERY; p <= end; p += STAMP_EVERY) {
    stamp.writeBigUInt64LE(BigInt(p));
    const from = Math.max(0, start - p);
    const to = Math.min(8, end + 1 - p);
    if (from < to) stamp.copy(out, p + from - start, from, to);
  }
  return out;
}

async function* plainText(): AsyncGenerator<Buffer> {
  for (let at = 0; at < SIZE; at += 4 * PATTERN_BYTES) {
    yield plainBytes(at, Math.min(SIZE, at + 4 * PATTERN_BYTES) - 1);
  }
}

async function collect(parts: AsyncIterable<Buffer>): Promise<Buffer> {
  const all: Buffer[] = [];
  for await (const part of parts) all.push(part);
  return Buffer.concat(all);
}

describe('a stored Crypt4GH file as a reader receives it', () => {
  const dir = mkdtempSync(join(tmpdir(), 'c4gh-ranges-'));
  const bodyFile = join(dir, 'genome.body');
  const dataKey = randomBytes(KEY_LENGTH);
  const reader = generateKeyPair();
  const readerSecretPath = join(dir, 'reader.sec');
  const stored = { dataKeys: [dataKey], size: SIZE, sha256: 'f'.repeat(64), name: 'genome.vcf' };
  let bodyBytesRead = 0;
  const readBody = (start: number, end: number) => {
    bodyBytesRead += end - start + 1;
    return createReadStream(bodyFile, { start, end, highWaterMark: 1024 * 1024 });
  };

  beforeAll(async () => {
    writeFileSync(readerSecretPath, await secretKeyFile(reader.secretKey));
    // The body as archive mode stores it, written once: 1 GiB encrypted on one core.
    await pipeline(Readable.from(encryptBody(plainText(), dataKey)), createWriteStream(bodyFile));
  }, 120_000);

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('X-C4GH-Plaintext-Range: 20 ranges of a 1 GiB file, each decrypted exactly by the reference implementation, none sending more than the range, two segments and the header', async () => {
    const last = SIZE - 1;
    const ranges: [number, number][] = [
      [0, 0],
      [last, last],
      // One whole segment, exactly; and the two bytes either side of a boundary.
      [SEGMENT_SIZE, 2 * SEGMENT_SIZE - 1],
      [SEGMENT_SIZE - 1, SEGMENT_SIZE],
      // Into the last, shorter segment.
      [last - SEGMENT_SIZE - 10, last],
      // Starting and ending inside an offset stamp of the plain-text.
      [3 * SEGMENT_SIZE + 1, 3 * SEGMENT_SIZE + STAMP_EVERY + 4],
    ];
    while (ranges.length < 20) {
      // Start and end mid-segment (never on a boundary), from one byte to a few MiB long.
      const start = randomInt(0, SIZE - 4 * 1024 * 1024);
      const length = [1, randomInt(2, SEGMENT_SIZE), randomInt(SEGMENT_SIZE, 4 * 1024 * 1024)][
        ranges.length % 3
      ];
      const end = start + length - 1;
      if (start % SEGMENT_SIZE === 0 || (end + 1) % SEGMENT_SIZE === 0) continue;
      ranges.push([start, end]);
    }
    for (const [start, end] of ranges) {
      bodyBytesRead = 0;
      const target = crypt4ghTarget(
        stored,
        { key: reader.publicKey, range: { start, end } },
        readBody,
      );
      expect(target.plaintext).toEqual({ start, end, size: SIZE });
      expect(target.name).toBe('genome.vcf.c4gh');
      const stream = await collect(target.read(0, target.size - 1));
      expect(stream.length).toBe(target.size);
      const header = await headerAt(stream);
      const sentBody = stream.length - header!.length;
      // The body sent is the segments holding the range, read from storage and nothing more ...
      const segments = Math.floor(end / SEGMENT_SIZE) - Math.floor(start / SEGMENT_SIZE) + 1;
      expect(sentBody).toBe(
        Math.min(
          segments * CIPHER_SEGMENT_SIZE,
          bodySize(SIZE) - Math.floor(start / SEGMENT_SIZE) * CIPHER_SEGMENT_SIZE,
        ),
      );
      expect(bodyBytesRead).toBe(sentBody);
      // ... at most the range and two segments more, as Crypt4GH segments (each 28 bytes more).
      expect(sentBody).toBeLessThanOrEqual(bodySize(end - start + 1 + 2 * SEGMENT_SIZE));
      const expected = plainBytes(start, end);
      const theirs = await referenceDecrypt([stream], readerSecretPath, dir);
      expect(theirs.length).toBe(end - start + 1);
      if (!theirs.equals(expected)) {
        let i = 0;
        while (theirs[i] === expected[i]) i++;
        throw new Error(
          `range ${start}-${end}: differs at ${i}: ${theirs.subarray(i, i + 16).toString('hex')} vs ${expected.subarray(i, i + 16).toString('hex')}; ours ${(await collect(decrypt([stream], [reader.secretKey]))).equals(expected)}`,
        );
      }
      expect((await collect(decrypt([stream], [reader.secretKey]))).equals(expected)).toBe(true);
    }
  }, 120_000);

  it('without a range, the whole stored body after a header for the reader', async () => {
    const target = crypt4ghTarget(stored, { key: reader.publicKey }, readBody);
    const header = await collect(target.read(0, 4095));
    const found = await headerAt(header);
    expect(target.size).toBe(found!.length + bodySize(SIZE));
    expect(target.plaintext).toBeUndefined();
    // The body's first bytes are the stored body's: nothing re-encrypted.
    const start = await collect(target.read(found!.length, found!.length + 999));
    const storedStart = await collect(readBody(0, 999));
    expect(start.equals(storedStart)).toBe(true);
  });

  it('decrypted (DRS_PLAINTEXT_DOWNLOADS=on): any HTTP range of the plain-text, from the segments holding it', async () => {
    const target = crypt4ghTarget(stored, {}, readBody);
    expect(target).toMatchObject({ size: SIZE, name: 'genome.vcf', etag: `"${'f'.repeat(64)}"` });
    for (const [start, end] of [
      [0, 10],
      [SEGMENT_SIZE - 3, SEGMENT_SIZE + 2],
      [700_000_123, 702_000_000],
      [SIZE - 5, SIZE - 1],
    ]) {
      bodyBytesRead = 0;
      expect((await collect(target.read(start, end))).equals(plainBytes(start, end))).toBe(true);
      expect(bodyBytesRead).toBeLessThanOrEqual(bodySize(end - start + 1 + 2 * SEGMENT_SIZE));
    }
  });

  it('reads X-C4GH-Plaintext-Range as one HTTP range is read; a bad one is a 400, one past the end a 416, naming the file', () => {
    expect(plaintextRangeIn('bytes=10-20', 100, 'a.vcf')).toEqual({ start: 10, end: 20 });
    expect(plaintextRangeIn(' bytes=10-', 100, 'a.vcf')).toEqual({ start: 10, end: 99 });
    expect(plaintextRangeIn('bytes=-5', 100, 'a.vcf')).toEqual({ start: 95, end: 99 });
    expect(plaintextRangeIn('bytes=-500', 100, 'a.vcf')).toEqual({ start: 0, end: 99 });
    expect(plaintextRangeIn('bytes=90-500', 100, 'a.vcf')).toEqual({ start: 90, end: 99 });
    const refusal = (value: string, size = 100) => {
      try {
        plaintextRangeIn(value, size, 'dir/a.vcf');
      } catch (error) {
        expect(error).toBeInstanceOf(DrsError);
        const { status, code, message } = error as DrsError;
        expect(message).toContain('dir/a.vcf');
        return `${status} ${code}`;
      }
      throw new Error(`${value} was accepted`);
    };
    for (const bad of [
      'bytes=20-10',
      'bytes=-',
      'bytes=-0',
      'bytes=1-2,4-5',
      'items=1-2',
      '1-2',
      'bytes=a-b',
    ])
      expect(refusal(bad)).toBe('400 c4gh_range_invalid');
    expect(refusal('bytes=100-')).toBe('416 c4gh_range_not_satisfiable');
    expect(refusal('bytes=0-0', 0)).toBe('416 c4gh_range_not_satisfiable');
  });
});
