import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { digest, tempDir } from '../../../test/support/dropzone-fixture';
import { REAL_IO_MS } from '../../../../../test/support/timeouts';
import { copyFilesOnThreads, type CopyFile, CopyThreadPool } from './copy-thread-pool';
import { CopyResult } from './hashing-copy';
import { ImportTransientError } from '../import-errors';

jest.setTimeout(REAL_IO_MS);

/** Copy threads that change grow-* files as they read them (see the copy-thread-pool spec). */
const SOURCE_CHANGING_THREAD = join(__dirname, '../../../test/support/source-changing-copy.thread');

/**
 * The threads' read mode (no `prepare`: a backend without local files, S3): the threads read and
 * hash, and each file's bytes come back to the caller to store.
 */
describe('copyFilesOnThreads reading for a backend without local files', () => {
  const pool = new CopyThreadPool(2, SOURCE_CHANGING_THREAD);
  let dir: string;

  beforeAll(() => pool.start(), 30_000);
  afterAll(() => pool.close());
  beforeEach(() => {
    dir = tempDir('read-threads');
  });

  function source(files: Record<string, string | Buffer>): CopyFile[] {
    return Object.entries(files).map(([path, content]) => {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), content);
      return { path, size: Buffer.byteLength(content) };
    });
  }

  const read = (
    files: CopyFile[],
    store: (position: number, result: CopyResult, bytes: Buffer) => Promise<void>,
  ) =>
    copyFilesOnThreads(pool, {
      stagingId: 'unused',
      md5: true,
      sourceRoot: dir,
      files,
      copied: (position, result, bytes) => store(position, result, bytes!),
      bytes: () => undefined,
      stopped: () => false,
      storeConcurrency: 2,
    });

  it("hands every file's exact bytes and digests to the store, a few at a time", async () => {
    const contents: Record<string, Buffer> = {};
    for (let i = 0; i < 400; i++)
      contents[`d${i % 7}/s${i}/f-${i}.bin`] = Buffer.alloc(i * 13, `${i}:`);
    const files = source(contents);
    const stored = new Map<number, { result: CopyResult; bytes: Buffer }>();
    let inFlight = 0;
    let most = 0;
    await read(files, async (position, result, bytes) => {
      inFlight += 1;
      most = Math.max(most, inFlight);
      // The bytes are the caller's until its promise settles: kept past an await, as an upload.
      await new Promise((resolve) => setImmediate(resolve));
      stored.set(position, { result, bytes: Buffer.from(bytes) });
      inFlight -= 1;
    });
    expect(stored.size).toBe(files.length);
    files.forEach((file, position) => {
      const { result, bytes } = stored.get(position)!;
      const content = contents[file.path];
      expect(bytes.equals(content)).toBe(true);
      expect(result).toMatchObject({
        size: content.length,
        sha256: digest('sha256', content),
        md5: digest('md5', content),
      });
    });
    // Two threads × two batches each, two files of each batch at once.
    expect(most).toBeGreaterThan(1);
    expect(most).toBeLessThanOrEqual(2 * 2 * 2);
  });

  it('a file that changes while it is read fails the copy as source_changed, never stored', async () => {
    const files = source({ 'a/one.txt': 'one', 'a/grow-two.txt': 'two', 'a/three.txt': 'three' });
    const storedPaths: string[] = [];
    const error = await read(files, async (position) => {
      storedPaths.push(files[position].path);
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ImportTransientError);
    expect((error as ImportTransientError).code).toBe('source_changed');
    expect(storedPaths).not.toContain('a/grow-two.txt');
    // What was read before it in the batch is stored (and so recorded for a later attempt).
    expect(storedPaths).toContain('a/one.txt');
  });

  it('a failing store stops new batches and returns once no store is in flight', async () => {
    const contents: Record<string, string> = {};
    for (let i = 0; i < 2000; i++) contents[`d${i % 40}/f${i}.txt`] = `file ${i}`;
    const files = source(contents);
    let inFlight = 0;
    let calls = 0;
    let refused!: () => void;
    const refusal = new Promise<void>((resolve) => (refused = resolve));
    const error = await read(files, async () => {
      calls += 1;
      if (calls === 3) {
        refused();
        throw new Error('the store refused it');
      }
      // The other stores of the moment end only after the refusal, as slower uploads would.
      inFlight += 1;
      await refusal;
      await new Promise((resolve) => setImmediate(resolve));
      inFlight -= 1;
    }).catch((e: unknown) => e);
    expect(String(error)).toContain('the store refused it');
    expect(inFlight).toBe(0);
    // The batches already read are answered; nothing like all 2,000 files was stored.
    expect(calls).toBeLessThan(files.length / 2);
  });
});
