import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import {
  CIPHER_SEGMENT_SIZE,
  decrypt,
  encrypt,
  encryptBody,
  encryptStream,
  generateKeyPair,
  headerPackets,
  MAC_LENGTH,
  NONCE_LENGTH,
  openHeader,
  secretKey,
  SEGMENT_SIZE,
} from '@app/crypt4gh';
import type { BenchContext } from '../lib/context';
import { fmt, SuiteReport, table, verdict } from '../lib/report';

/** Ours against Node's raw ChaCha20-Poly1305 doing the same segments: at least this ratio. */
const TARGET_RATIO = 0.85;
const CHUNK = 1024 * 1024;
/** Raw runs in slices of this many bytes, one after each slice of ours (see `interleaved`). */
const SLICE = 64 * 1024 * 1024;

/** `total` bytes of plain-text in 1 MiB chunks (one random buffer, reused: nothing is kept). */
async function* plainText(total: number, chunk: Buffer): AsyncGenerator<Buffer> {
  for (let sent = 0; sent < total; sent += chunk.length) {
    yield chunk.subarray(0, Math.min(chunk.length, total - sent));
  }
}

/** Node's AEAD alone: `bytes` of plain-text sealed in 64 KiB segments with random nonces. */
function rawSeal(bytes: number, chunk: Buffer, key: Buffer): void {
  for (let done = 0; done < bytes; done += SEGMENT_SIZE) {
    const at = done % chunk.length;
    const cipher = createCipheriv('chacha20-poly1305', key, randomBytes(NONCE_LENGTH), {
      authTagLength: MAC_LENGTH,
    });
    cipher.update(chunk.subarray(at, at + SEGMENT_SIZE));
    cipher.final();
    cipher.getAuthTag();
  }
}

/** Node's AEAD alone: every segment of `body` opened and verified. */
function rawOpen(body: Buffer, key: Buffer): void {
  for (let at = 0; at < body.length; at += CIPHER_SEGMENT_SIZE) {
    const segment = body.subarray(at, at + CIPHER_SEGMENT_SIZE);
    const decipher = createDecipheriv('chacha20-poly1305', key, segment.subarray(0, NONCE_LENGTH), {
      authTagLength: MAC_LENGTH,
    });
    decipher.setAuthTag(segment.subarray(segment.length - MAC_LENGTH));
    decipher.update(segment.subarray(NONCE_LENGTH, segment.length - MAC_LENGTH));
    decipher.final();
  }
}

interface Interleaved {
  oursMiBs: number;
  rawMiBs: number;
  /** Largest resident-set growth seen while ours ran (raw holds nothing between calls). */
  rssGrowthMiB: number;
}

/**
 * One stream of ours, consumed to the end; after each SLICE of its output a raw slice of the
 * same size runs. Both see the same load on a shared machine (the figures of back-to-back runs
 * here swung 3× from one to the next); ours is the whole time less the raw slices' time.
 */
async function interleaved(
  ours: AsyncIterable<Buffer>,
  plainBytes: number,
  raw: () => void,
): Promise<Interleaved> {
  const before = process.memoryUsage().rss;
  let peak = before;
  let rawMs = 0;
  let rawSlices = 0;
  let seen = 0;
  let next = SLICE;
  const started = performance.now();
  for await (const piece of ours) {
    seen += piece.length;
    if (seen >= next) {
      next += SLICE;
      peak = Math.max(peak, process.memoryUsage().rss);
      const t = performance.now();
      raw();
      rawMs += performance.now() - t;
      rawSlices++;
    }
  }
  const oursMs = performance.now() - started - rawMs;
  peak = Math.max(peak, process.memoryUsage().rss);
  return {
    oursMiBs: plainBytes / 2 ** 20 / (oursMs / 1000),
    rawMiBs: (rawSlices * SLICE) / 2 ** 20 / (rawMs / 1000),
    rssGrowthMiB: (peak - before) / 2 ** 20,
  };
}

/**
 * Crypt4GH encryption and decryption throughput on one core (this process; the cipher calls are
 * synchronous), each interleaved with Node's raw ChaCha20-Poly1305 sealing or opening the same
 * 64 KiB segments, and the memory ours needs for the whole stream.
 */
export async function crypt4ghBench(ctx: BenchContext): Promise<SuiteReport> {
  const total = ctx.quick ? 4 * SLICE : 16 * SLICE;
  const chunk = randomBytes(CHUNK);
  const reader = generateKeyPair();
  const dataKey = randomBytes(32);

  const sealed = await interleaved(
    encrypt(plainText(total, chunk), [reader.publicKey]),
    total,
    () => rawSeal(SLICE, chunk, dataKey),
  );
  ctx.log(`crypt4gh encrypt: ours ${fmt(sealed.oursMiBs)} MiB/s, raw ${fmt(sealed.rawMiBs)} MiB/s`);

  // One slice of body, held: whole segments under one data key and nonces of their own, so the
  // slice repeated is a valid body of any length (read from memory by both sides).
  const { header } = encryptStream([], [reader.publicKey]);
  const key = openHeader(await headerPackets(header), [secretKey(reader.secretKey)]).dataKeys[0];
  const parts: Buffer[] = [];
  for await (const part of encryptBody(plainText(SLICE, chunk), key)) parts.push(part);
  const body = Buffer.concat(parts);
  const file = async function* (): AsyncGenerator<Buffer> {
    yield header;
    for (let round = 0; round < total / SLICE; round++) {
      for (let at = 0; at < body.length; at += CHUNK) yield body.subarray(at, at + CHUNK);
    }
  };
  const opened = await interleaved(decrypt(file(), [reader.secretKey]), total, () =>
    rawOpen(body, key),
  );
  ctx.log(`crypt4gh decrypt: ours ${fmt(opened.oursMiBs)} MiB/s, raw ${fmt(opened.rawMiBs)} MiB/s`);

  const ratio = (run: Interleaved) => run.oursMiBs / run.rawMiBs;
  const row = (label: string, run: Interleaved) => [
    label,
    fmt(run.oursMiBs),
    fmt(run.rawMiBs),
    fmt(ratio(run), 2),
    fmt(run.rssGrowthMiB, 0),
    verdict(ratio(run) >= TARGET_RATIO),
  ];
  const size = total >= 2 ** 30 ? `${total / 2 ** 30} GiB` : `${total / 2 ** 20} MiB`;
  const markdown = [
    '## Crypt4GH',
    '',
    `libs/crypt4gh on one core (one Node process; the cipher calls are synchronous): one ${size}`,
    "stream each way, beside Node's raw ChaCha20-Poly1305 sealing or opening the same 64 KiB",
    'segments with random nonces, run in 64 MiB slices between slices of ours so that both see the',
    'same load. Both read from memory (1 MiB chunks). RSS growth: the most the process grew while',
    `ours ran the whole stream. Target: at least ${TARGET_RATIO}× raw.${ctx.quick ? ' **Quick mode: not a real figure.**' : ''}`,
    '',
    table(
      ['operation', 'ours MiB/s', 'raw MiB/s', 'ratio', 'RSS growth MiB', 'target'],
      [row('encrypt', sealed), row('decrypt', opened)],
    ),
  ].join('\n');
  return {
    name: 'crypt4gh',
    title: 'Crypt4GH',
    markdown,
    targetsMet: ratio(sealed) >= TARGET_RATIO && ratio(opened) >= TARGET_RATIO,
  };
}
