import { createHash, randomBytes } from 'node:crypto';
import { bodySize, decrypt, generateKeyPair, HeaderWriter, KEY_LENGTH } from '@app/crypt4gh';
import { PROCESS_START_MS } from '../../../../test/support/timeouts';
import { SEAL_SLOT_BYTES, SealingThreads } from './sealing-threads';

// Real worker threads, each loading the library (through ts-node here): seconds on a busy machine.
jest.setTimeout(PROCESS_START_MS);

const MiB = 1024 * 1024;
const archive = generateKeyPair();
const headers = new HeaderWriter([archive.publicKey]);

/** A sink that keeps copies of what it is given (the writer reuses its slots afterwards). */
function collecting(): { parts: Buffer[]; write(sealed: Buffer): Promise<void> } {
  const parts: Buffer[] = [];
  return {
    parts,
    write: (sealed) => {
      parts.push(Buffer.from(sealed));
      return Promise.resolve();
    },
  };
}

async function plaintextOf(body: Buffer, dataKey: Buffer): Promise<Buffer> {
  const parts: Buffer[] = [];
  const header = headers.build({ dataKeys: [dataKey] });
  for await (const part of decrypt([body], [archive.secretKey], { header })) parts.push(part);
  return Buffer.concat(parts);
}

/** Writes `plain` in chunks of `chunkBytes` and ends: the sealed body and its reported SHA-256. */
async function seal(
  threads: SealingThreads,
  dataKey: Buffer,
  plain: Buffer,
  chunkBytes: number,
): Promise<{ body: Buffer; sha256: string }> {
  const sink = collecting();
  const sealed = await threads.open(dataKey, sink);
  for (let at = 0; at < plain.length; at += chunkBytes)
    await sealed.write(plain.subarray(at, at + chunkBytes));
  const sha256 = await sealed.end();
  return { body: Buffer.concat(sink.parts), sha256 };
}

describe('SealingThreads', () => {
  const threads = new SealingThreads(2);

  afterAll(() => threads.close());

  it('seals bodies of any length on threads, several at once, into bodies that decrypt; the SHA-256 is the sealed bytes', async () => {
    const cases = [
      { plain: randomBytes(SEAL_SLOT_BYTES), chunk: 128 * 1024 },
      { plain: randomBytes(3 * MiB + 5), chunk: 100_003 },
      { plain: randomBytes(2 * SEAL_SLOT_BYTES + 65_536), chunk: 5 * MiB },
      { plain: randomBytes(7), chunk: 7 },
    ];
    const keys = cases.map(() => randomBytes(KEY_LENGTH));
    const results = await Promise.all(
      cases.map(({ plain, chunk }, i) => seal(threads, keys[i], plain, chunk)),
    );
    for (const [i, { body, sha256 }] of results.entries()) {
      expect(body.length).toBe(bodySize(cases[i].plain.length));
      expect(sha256).toBe(createHash('sha256').update(body).digest('hex'));
      expect((await plaintextOf(body, keys[i])).equals(cases[i].plain)).toBe(true);
    }
    expect(threads.threadCount).toBeGreaterThanOrEqual(1);
    expect(threads.threadCount).toBeLessThanOrEqual(2);
  });

  it('a sink that fails fails the body; an aborted body leaves the threads sealing the next', async () => {
    const failing = await threads.open(randomBytes(KEY_LENGTH), {
      write: () => Promise.reject(new Error('store refused')),
    });
    await failing.write(randomBytes(SEAL_SLOT_BYTES));
    // The first slot's sealed bytes are written once the second is handed over (or at the end).
    await expect(failing.end()).rejects.toThrow('store refused');
    await expect(failing.write(Buffer.alloc(1))).rejects.toThrow('store refused');
    await failing.abort();

    const aborted = await threads.open(randomBytes(KEY_LENGTH), collecting());
    await aborted.write(randomBytes(SEAL_SLOT_BYTES + 3));
    await aborted.abort();
    await expect(aborted.write(Buffer.alloc(1))).rejects.toThrow('aborted');

    const dataKey = randomBytes(KEY_LENGTH);
    const plain = randomBytes(2 * MiB + 1);
    const { body } = await seal(threads, dataKey, plain, 256 * 1024);
    expect((await plaintextOf(body, dataKey)).equals(plain)).toBe(true);
  });

  it('refuses new bodies once closed', async () => {
    const closed = new SealingThreads(1);
    await closed.close();
    await expect(closed.open(randomBytes(KEY_LENGTH), collecting())).rejects.toThrow('closed');
  });
});
